package report_test

import (
	"fmt"
	"os"

	"github.com/bhsim/bhsim/bench/report"
)

// A reproduction's table written as bhsim-reproduce-csv/1: the schema on
// every row, numbers in their shortest exact form.
func ExampleReproduce_WriteCSV() {
	doc := report.Reproduce{Schema: report.ReproduceSchema, Threads: []report.Thread{{
		Name: "lru", Profile: "x86-server",
		Tables: []report.Table{{ID: "lru-tosatti", Unit: "ns per call", Cells: []report.Cell{
			{Row: "8 slots", Column: "lookup", Published: 68, Simulated: 68.5, ErrorPercent: 0.7352941176470589, Label: "fitted"},
		}}},
	}}}
	if err := doc.WriteCSV(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// schema,thread,profile,table,row,column,unit,published,simulated,error_percent,label
	// bhsim-reproduce-csv/1,lru,x86-server,lru-tosatti,8 slots,lookup,ns per call,68,68.5,0.7352941176470589,fitted
}

// A dd sweep's document written as bhsim-sweep/2 JSON, indented as every
// JSON output of bhsim is; the descriptions that head its text are not in
// it.
func ExampleWriteJSON() {
	doc := report.Sweep{Schema: report.SweepSchema, Tool: report.Tool{Name: "bhsim", Version: "v1.0.0", Go: "go1.26.0"},
		Scenario: "dd", Machine: "helios4", Profile: "helios4", Costs: "fitted", MachineDescription: "not in the JSON",
		Rows: []report.SweepRow{{Kernel: "5.10.10", BlockSizeChoice: "grow", Layout: "raid0", BS: 1 << 20, CPUs: 2, Count: 16, Op: "write",
			BlockSize: 512, MBps: 61.5, BiosPerPage: 8, RequestsPerMiB: 2, Bottleneck: "cpu0"}}}
	if err := report.WriteJSON(os.Stdout, doc); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "schema": "bhsim-sweep/2",
	//   "tool": {
	//     "name": "bhsim",
	//     "version": "v1.0.0",
	//     "go": "go1.26.0"
	//   },
	//   "scenario": "dd",
	//   "machine": "helios4",
	//   "profile": "helios4",
	//   "costs": "fitted",
	//   "rows": [
	//     {
	//       "kernel": "5.10.10",
	//       "block_size_choice": "grow",
	//       "layout": "raid0",
	//       "bs": 1048576,
	//       "cpus": 2,
	//       "count": 16,
	//       "op": "write",
	//       "block_size": 512,
	//       "mbps": 61.5,
	//       "bios_per_page": 8,
	//       "requests_per_mib": 2,
	//       "bottleneck": "cpu0"
	//     }
	//   ]
	// }
}
