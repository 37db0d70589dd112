package source_test

import (
	"fmt"
	"os"

	"github.com/bhsim/bhsim/bench/source"
)

// A teacher's seeded little problem: eight 4 KiB I/Os on a 32 KiB device,
// a third of them reads, an fsync after every two writes. The header names
// the seed; the same seed gives the class the same problem.
func ExampleNewGenerator() {
	g, err := source.ParseGenerator("random:dev=32K,n=8,reads=0.33,fsync=2,seed=1")
	if err != nil {
		fmt.Println(err)
		return
	}
	g = g.WithSeed(2024) // a command line's -s 2024
	r, err := source.NewGenerator(g)
	if err != nil {
		fmt.Println(err)
		return
	}
	source.WriteCSV(os.Stdout, r, g.Header())
	// Output:
	// # gen random:dev=32K,n=8,size=4K,align=4K,reads=0.33,cpus=1,fsync=2,qd=1,seed=2024
	// op,offset,length,cpu,time
	// read,20K,4K,0,0
	// write,16K,4K,0,0
	// write,24K,4K,0,0
	// fsync,0,0,0,0
	// read,0,4K,0,0
	// write,0,4K,0,0
	// read,16K,4K,0,0
	// write,0,4K,0,0
	// fsync,0,0,0,0
	// write,12K,4K,0,0
}
