package report

import (
	"fmt"
	"strings"

	"github.com/bhsim/bhsim/bench/threads"
	"github.com/bhsim/bhsim/bench/workload"
)

// Names returns the name of each of xs, in order: the valid values a usage
// line lists. O(len(xs)).
func Names[T any](xs []T, name func(T) string) []string {
	names := make([]string, 0, len(xs))
	for _, x := range xs {
		names = append(names, name(x))
	}
	return names
}

// ReproduceHelp is the first lines of `bhsim reproduce --help`: its
// synopsis and what it does, then every thread with its subject and
// profile. O(threads).
func ReproduceHelp() string {
	var sb strings.Builder
	sb.WriteString("[--format text|csv|json] [--profile NAME|FILE] [--cost PARAM=NS] [--plot DIR] [--cross-validate] [thread ...]\n\n" +
		"Reproduces the named LKML threads (all by default), each on the profile of the machine it was\n" +
		"measured on unless --profile names another: the published table beside the simulated one, every\n" +
		"cell labelled fitted, fitted (shared run), input or predicted, with its error. Threads:\n\n")
	for _, t := range threads.All() {
		fmt.Fprintf(&sb, "  %-10s %s (profile %s)\n", t.Name, t.Subject, t.Profile)
	}
	return strings.TrimRight(sb.String(), "\n")
}

// ExplainHelp is the first lines of `bhsim explain --help`: its synopsis,
// then every operation with its flags, their defaults, and its profile.
// O(operations × flags).
func ExplainHelp() string {
	var sb strings.Builder
	sb.WriteString("OP [--profile NAME|FILE] [--costs fitted|built-in] [--cost PARAM=NS] [op flags]\n\n" +
		"Runs one operation on the model and prints its event ledger under a profile:\n" +
		"per resource, count × unit cost = simulated ns. Operations, their flags and defaults:\n\n")
	for _, op := range workload.ExplainOps() {
		fmt.Fprintf(&sb, "  %s: %s\n", op.Name, op.Summary)
		for _, a := range op.Args {
			fmt.Fprintf(&sb, "      --%s (default %s): %s\n", a.Name, a.Default, strings.ReplaceAll(a.Usage, "`", ""))
		}
		if op.Profile != "" {
			fmt.Fprintf(&sb, "      profile %s\n", op.Profile)
		}
	}
	sb.WriteString("\nExample: bhsim explain write-page --bsize 512")
	return sb.String()
}

// RunHelp is `bhsim run`'s help text: its synopsis and what it does, as
// the command prints it after its name.
const RunHelp = `[--on model|host] [--kernel NAME] [--runs N] [--format text|csv|json] FILE
       bhsim run [workload flags] TRACE... [--shard K/N] | --gen SPEC [-s SEED] | --step [--quiz [--show]] -s SEED

Runs the scenario in FILE (docs/scenario-language.md) on the model, or with
--on host on this machine's Linux kernel (root, loop devices and tracefs:
a private loop device, tmpfs and tracing instance, all removed afterwards),
and prints per operation and in total the counters both runners derive
(bios, merges, requests, plugs, sectors, page-cache folios, readahead,
writeback errors), each call's result, and on the model its event ledger,
on the host the thread CPU time per call (a measurement, never compared)
and each operation's elapsed time, both from a second pass on a fresh
device without tracepoints.
--format json writes the result file bhsim validate compares
(docs/output-schema.md).

A workload of one's own — a trace (blkparse, fio iolog, CSV; docs/traces.md),
a seeded generator (--gen), or a scenario with --dist — runs on the model's
--cpus CPUs, interleaved by simulated time, and prints its distributions:
latency per operation kind (p50, p90, p99, p99.9, max), throughput over
simulated time, each resource's busy time, the bh LRU's hit ratio and
miss-ratio curve (--mrc), bios and requests per operation; every header
names the seed and the timing profile. --step prints each operation's cost
and the page cache's state; --quiz hides the answers, --show reveals them;
--step -s SEED alone makes a fresh small problem. --one-pass reads a TRACE
once, parsed as it runs, instead of first for its CPUs, records and
extent (it needs --dev). Several TRACEs run one
after another (--format json: bhsim-run-list/1); --shard K/N runs those i
with i mod N = K, for bhsim merge (docs/at-scale.md).`
