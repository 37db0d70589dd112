// Package report turns bhsim's simulated results into the outputs the bhsim
// command prints, so that a program gets the same charts, tables, JSON and
// CSV from Go: everything cmd/bhsim shows is drawn or written here, and the
// command only parses its flags, calls these functions and prints.
//
// # What it offers
//
//   - Output schemas: the versioned JSON documents of a reproduction
//     (Reproduce, built by ReproduceOf or ThreadOf), a dd sweep (Sweep,
//     SweepOf) and the model set beside the kernel (Validation, Validate),
//     each with its CSV (the WriteCSV methods, WriteResultCSV, WriteRunCSV)
//     and the text the command prints (WriteText, WriteReproduceText,
//     WriteResultText, WriteRunText, WriteExplanation). WriteJSON and
//     WriteCSV are the encoders every output shares: JSON indented by two
//     spaces, CSV with a first column naming the schema on every row, numbers
//     in the shortest form that reads back exactly (Num). Tool is the
//     identity of the binary every JSON document carries.
//   - Charts (gonum/plot): WriteFigure draws a reproduction's figure,
//     published beside simulated, as SVG and PNG; WriteRunCharts draws a
//     workload run's latency CDF and throughput over simulated time.
//   - Runs as the command makes them: RunThreads runs several threads'
//     reproductions at once; Validate runs scenarios on the model beside a
//     KernelSide (Recorded results, or a host run); Costs resolves a timing
//     profile as --profile, --costs and --cost do; WorkloadSpec builds a
//     workload of one's own and its run options from the text forms the
//     command line takes.
//   - Long runs: Progress draws a one-line progress report on an io.Writer
//     (a terminal); Budget estimates a run's total time after
//     EstimateAfter and cancels one that would pass RunLimit (ten
//     minutes), whose refusal is an *OverBudgetError.
//
// Errors speak of the fields and values at fault (a *FieldError names its
// field, "WorkloadSpec.LBS"), never of command-line flags: the command says
// them in its flags.
//
// # Output schemas
//
// docs/output-schema.md in the repository documents every field of every
// versioned output; its schema names are the constants ReproduceSchema
// (bhsim-reproduce/1) and ReproduceCSVSchema, SweepSchema (bhsim-sweep/2)
// and SweepCSVSchema, ValidateSchema (bhsim-validate/1), ResultCSVSchema
// (bhsim-result-csv/1, a scenario's result; its JSON is
// scenario.Result.Encode's, WriteResultJSON) and RunCSVSchema
// (bhsim-run-dist-csv/1, a workload's distributions; its JSON is
// engine.RunResult's, bhsim-run-dist/1). A version changes when a field
// is renamed, removed or changes meaning; fields may be added within a
// version. Every unit is stated: times in nanoseconds (simulated unless
// said), rates in decimal MB/s, sizes in bytes.
//
// Nothing here keeps state between calls, and the same inputs write the
// same bytes (a chart's SVG and PNG too); only Tool and the progress and
// budget reports depend on the binary and the clock.
package report
