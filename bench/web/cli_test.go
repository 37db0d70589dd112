//go:build !js

package web

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/engine"
	"github.com/bhsim/bhsim/bench/report"
	"github.com/bhsim/bhsim/bench/workload"
)

// cliSweep returns what `bhsim sweep --machine helios4 --kernel KERNEL
// --blocksize SIZES --count COUNT` prints, by the library calls the
// command makes (its grid through the axes, SweepDDContext, report.SweepOf
// and WriteText): block size → its bios/page, requests/MiB, MB/s and
// bottleneck columns, as printed.
func cliSweep(t *testing.T, kernel string, sizes []string, count uint64) map[string][]string {
	t.Helper()
	m, err := workload.DDMachineByName("helios4")
	require.NoError(t, err)
	g := workload.DDGrid{Base: m.Base}
	require.NoError(t, g.SetAxis("kernel", []string{kernel}))
	require.NoError(t, g.SetAxis("blocksize", sizes))
	require.NoError(t, g.SetAxis("count", []string{strconv.FormatUint(count, 10)}))
	p, costs, err := report.Costs{Costs: "fitted", SetBy: "--cost"}.Resolve(m.Profile)
	require.NoError(t, err)
	rows, err := workload.SweepDDContext(context.Background(), g, p, workload.SweepOptions{})
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, report.SweepOf(report.CurrentTool(), m, p, costs, rows).WriteText(&text))
	out := map[string][]string{}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	for _, l := range lines[4:] { // the header's two lines, a blank line, the column names
		f := strings.Fields(l)
		require.GreaterOrEqual(t, len(f), 12, l)
		out[f[1]] = []string{f[9], f[10], f[8], strings.Join(f[11:], " ")}
	}
	require.Len(t, out, len(sizes))
	return out
}

// cliStep returns what `bhsim run --step -s SEED` prints (with quiz,
// --quiz; with show, --quiz --show), less the quiz's closing line: the
// command's path through report.WorkloadSpec to engine.Run.
func cliStep(t *testing.T, seed uint64, quiz, show bool) string {
	t.Helper()
	s := report.DefaultWorkloadSpec()
	s.Gen, s.Seed = engine.FreshStepProblem, strconv.FormatUint(seed, 10)
	w, err := s.Workload()
	require.NoError(t, err)
	o, err := s.Options()
	require.NoError(t, err)
	var out bytes.Buffer
	o.Step = &engine.StepOptions{W: &out, Quiz: quiz, Show: show}
	_, err = engine.Run(context.Background(), w, o)
	require.NoError(t, err)
	return out.String()
}
