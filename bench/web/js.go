//go:build js

package web

import (
	"context"
	"syscall/js"
)

// Register makes the model callable from the page's script:
// globalThis.bhsim.call(name, requestJSON) runs Call and returns its
// Answer's JSON, synchronously (the model runs on the page's one thread;
// the script lets the page paint before it calls). Then it calls
// globalThis.bhsimReady, if the page defined it, to say the model is
// loaded. The js.Func lives as long as the page.
func Register() {
	call := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
			return Call(context.Background(), "", "")
		}
		return Call(context.Background(), args[0].String(), args[1].String())
	})
	obj := js.Global().Get("Object").New()
	obj.Set("call", call)
	js.Global().Set("bhsim", obj)
	if ready := js.Global().Get("bhsimReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
}
