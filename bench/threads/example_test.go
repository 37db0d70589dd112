package threads_test

import (
	"fmt"

	"github.com/bhsim/bhsim/bench/threads"
)

// The bh-LRU thread on the model: the 68 ns cell is fitted, the 114 ns cell
// predicted from the profile's documented costs.
func ExampleThread_Run() {
	th, _ := threads.ByName("lru")
	r, _ := th.Run(nil, threads.Options{})
	for _, c := range r.Table.Cells {
		fmt.Printf("%-22s published %3.0f ns, simulated %5.1f ns (%s)\n", c.Column, c.Published, c.Simulated, c.Label)
	}
	// Output:
	// __find_get_block_slow  published  68 ns, simulated  68.0 ns (fitted)
	// __find_get_block       published 114 ns, simulated  98.5 ns (predicted)
}
