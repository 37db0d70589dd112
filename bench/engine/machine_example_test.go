package engine_test

import (
	"fmt"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bufcache"
)

// A machine of two CPUs running 5.10.10's variants around a 1 MiB disk of
// 512-byte sectors: the simplified set_init_blocksize leaves the device at
// 512-byte blocks, where 5.10.10+revert grows them to a page.
func ExampleBuild() {
	for _, name := range []string{"5.10.10", "5.10.10+revert"} {
		k := engine.MustKernel(name)
		m, err := engine.Build(engine.MachineSpec{Kernel: &k, Config: bufcache.Config{CPUs: 2},
			Disk: engine.DiskSpec{Name: "sda", Size: 1 << 20, Logical: 512}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d CPUs, %s of %d-byte blocks\n", name, m.NumCPU(), m.Dev.Name(), m.Dev.BlockSize())
	}
	// Output:
	// 5.10.10: 2 CPUs, sda of 512-byte blocks
	// 5.10.10+revert: 2 CPUs, sda of 4096-byte blocks
}
