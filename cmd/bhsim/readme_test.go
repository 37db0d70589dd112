package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/internal/race"
)

// readmeCommands returns the `go run ./cmd/bhsim ...` command lines of the
// README's indented blocks, each as its arguments (a trailing # comment
// dropped).
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var cmds [][]string
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "    go run ./cmd/bhsim ")
		if !ok {
			continue
		}
		rest, _, _ = strings.Cut(rest, "#")
		cmds = append(cmds, strings.Fields(rest))
	}
	return cmds
}

// TestReadmeCommands runs every bhsim command the README shows and checks
// that it succeeds, and that the figure the README quotes from one of them
// is what it prints. reproduce, which takes half a minute, runs one thread
// here (its other threads run in the threads package's tests).
func TestReadmeCommands(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("runs the README's commands: not under -short or -race")
	}
	cmds := readmeCommands(t)
	require.GreaterOrEqual(t, len(cmds), 8, "the README shows its commands")
	for _, args := range cmds {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Chdir("../..") // the README's paths are the repository's
			if strings.Contains(strings.Join(args, " "), "--on host") && os.Getenv("BHSIM_KERNEL") != "1" {
				t.Skip("runs on the host kernel: set BHSIM_KERNEL=1 (as root)")
			}
			if args[0] == "reproduce" {
				args = append([]string{"reproduce", "--plot", t.TempDir()}, "lru")
			}
			if i := slices.Index(args, "--plot"); i >= 0 && i+1 < len(args) {
				args = slices.Clone(args)
				args[i+1] = t.TempDir() // the charts go nowhere lasting
			}
			status, out, errs := bhsim(args...)
			if status == 1 && slices.Contains(args, "host") {
				// A live run may differ where docs/known-differences.md
				// says it can, and nowhere else.
				assertKnownLiveDifferences(t, out)
				return
			}
			require.Equal(t, 0, status, errs)
			assert.NotEmpty(t, out)
		})
	}
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	quoted := regexp.MustCompile(`write-page --bsize 512 --layout raid10n2\x60 ends at ([0-9.]+) MB/s`).FindSubmatch(b)
	require.NotNil(t, quoted, "the README quotes explain write-page's figure")
	_, out, _ := bhsim("explain", "write-page", "--bsize", "512", "--layout", "raid10n2")
	assert.Contains(t, out, "so "+string(quoted[1])+" MB/s")
	excerpt := regexp.MustCompile("(?s)The generator's run prints, after its header:\n\n```\n(.*?)```").FindSubmatch(b)
	require.NotNil(t, excerpt, "the README quotes a workload's distributions")
	_, out, _ = bhsim("run", "--gen", "random:dev=64M,n=20000,reads=0.5,cpus=4,fsync=1000", "-s", "7")
	assert.Contains(t, out, string(excerpt[1]), "the quoted distributions are what the command prints")
	summary := regexp.MustCompile(`\d+ of \d+ values equal over \d+ scenarios[^\n]*`).Find(b)
	require.NotNil(t, summary, "the README quotes validate's summary")
	_, out, _ = bhsim("validate", "../../testdata/scenarios")
	assert.Contains(t, out, string(summary))
}

// TestReadmeBenchRecipes checks the README's benchmark recipes: each runs
// the benchmarks it names and no others (an anchored -bench pattern) and
// says how long it runs (-count 6, and a -benchtime where the default
// would make it pass two minutes), as the README promises.
func TestReadmeBenchRecipes(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	recipe := regexp.MustCompile(`^    go test -run '\^\$' -bench '([^']*)'(.*) \./[a-z/]+( > [a-z]+\.txt)?$`)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "    go test ") || !strings.Contains(line, "-bench") || strings.Contains(line, "-bench .") {
			continue
		}
		n++
		m := recipe.FindStringSubmatch(line)
		require.NotNil(t, m, "a recipe: go test -run '^$' -bench 'PATTERN' FLAGS ./PKG > FILE.txt: %s", line)
		assert.Regexp(t, `^\^Benchmark[A-Za-z]+\$$`, m[1], "anchored to one benchmark function: %s", line)
		assert.Contains(t, m[2], "-count 6", line)
	}
	assert.GreaterOrEqual(t, n, 5, "the README's recipes were found")
}

// TestReadmeDependency runs the README's line that makes a module of one's
// own depend on a checkout, in a fresh module beside a copy's place (a link
// to this repository), then builds a program importing bufcache: the first
// build must not fail for a missing go.sum entry. It uses only the module
// cache (GOPROXY=off), which this repository's own build has filled, and
// clears GOFLAGS, whose -mod=mod would hide the failure. It takes about
// five seconds (go get loads every package of the module), in parallel with
// the package's other tests.
func TestReadmeDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command: not under -short")
	}
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^    (go mod edit -require github.com/bhsim/bhsim.*)$`).FindSubmatch(b)
	require.NotNil(t, line, "the README shows how to depend on a checkout")
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(root, filepath.Join(dir, "bhsim")))
	app := filepath.Join(dir, "app")
	require.NoError(t, os.Mkdir(app, 0o755))
	env := append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = app, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	}
	run("go", "mod", "init", "example.com/app")
	run("sh", "-c", string(line[1]))
	main := "package main\n\nimport \"github.com/bhsim/bhsim/bufcache\"\n\nfunc main() { _, _ = bufcache.NewMachine(bufcache.Config{CPUs: 1}) }\n"
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.go"), []byte(main), 0o644))
	run("go", "build", "-o", os.DevNull, ".")
}

// liveDifference is a row of the table "Differences a live run can show" in
// docs/known-differences.md: the scenarios and the counters (a trailing *
// matches any suffix) where a live run may differ from the model.
type liveDifference struct {
	scenarios, counters []string
}

// knownDifferencesFile is docs/known-differences.md, found from the
// package's directory when the test binary starts: the README's commands
// run with the repository's root as their directory.
var knownDifferencesFile, _ = filepath.Abs("../../docs/known-differences.md")

// knownLiveDifferences parses that table's rows.
func knownLiveDifferences(t *testing.T) []liveDifference {
	t.Helper()
	b, err := os.ReadFile(knownDifferencesFile)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "## Differences a live run can show\n")
	require.True(t, ok, "known-differences has its table of live differences")
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([^`]+)`")
	var out []liveDifference
	for _, line := range strings.Split(section, "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 4 || !strings.Contains(cols[1], "`") {
			continue
		}
		var d liveDifference
		for _, m := range code.FindAllStringSubmatch(cols[1], -1) {
			d.scenarios = append(d.scenarios, m[1])
		}
		for _, m := range code.FindAllStringSubmatch(cols[2], -1) {
			d.counters = append(d.counters, m[1])
		}
		out = append(out, d)
	}
	require.NotEmpty(t, out, "the table of live differences has rows")
	return out
}

// covers reports whether d lists scenario's counter.
func (d liveDifference) covers(scenario, counter string) bool {
	if !slices.Contains(d.scenarios, scenario) {
		return false
	}
	for _, c := range d.counters {
		if prefix, ok := strings.CutSuffix(c, "*"); ok && strings.HasPrefix(counter, prefix) || c == counter {
			return true
		}
	}
	return false
}

// differingRows returns the scenario and counter of every row validate's
// text output marks as differing.
func differingRows(out string) [][2]string {
	var rows [][2]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[len(f)-1] == "≠" {
			rows = append(rows, [2]string{f[0], f[2]})
		}
	}
	return rows
}

// assertKnownLiveDifferences checks that every row validate's text output
// marks as differing is one that docs/known-differences.md lists.
func assertKnownLiveDifferences(t *testing.T, out string) {
	t.Helper()
	known := knownLiveDifferences(t)
	rows := differingRows(out)
	assert.NotEmpty(t, rows, "validate exited 1, so some row differs:\n%s", out)
	for _, r := range rows {
		assert.True(t, slices.ContainsFunc(known, func(d liveDifference) bool { return d.covers(r[0], r[1]) }),
			"%s %s differs on the host, and docs/known-differences.md does not say it can", r[0], r[1])
	}
}

// TestKnownLiveDifferences checks the parse of docs/known-differences.md's
// table that the live README test trusts: the rows it lists are covered,
// others are not.
func TestKnownLiveDifferences(t *testing.T) {
	known := knownLiveDifferences(t)
	cases := []struct {
		scenario, counter string
		covered           bool
	}{
		{"read-cold-1m", "rq.read.bytes=790528", true},
		{"read-cold-4k-sector", "rq.read", true},
		{"read-cold-1m", "plug.unplug.rqs", true},
		{"read-cold-1m", "bio.split", true},
		{"read-cold-1m", "pagecache.add.pages", false},
		{"read-cold-1m", "rq.read.bytes", false},
		{"sparse-pages-bs4k", "rq.insert", true},
		{"sparse-pages-bs4k", "rq.get", false},
		{"dd-bs4k", "plug.plug", false},
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.counter, func(t *testing.T) {
			got := slices.ContainsFunc(known, func(d liveDifference) bool { return d.covers(c.scenario, c.counter) })
			assert.Equal(t, c.covered, got)
		})
	}
}

// TestDifferingRows reads the differing rows out of validate's text output.
func TestDifferingRows(t *testing.T) {
	out := "model (kernel preset 6.18) beside the kernel (6.18.44 x86_64, host)\n\n" +
		"scenario      op     counter or result      model  kernel  \n" +
		"read-cold-1m  total  rq.read                3      2       ≠\n" +
		"read-cold-1m  total  sectors.read           4096   4096    =\n" +
		"read-cold-1m  4      rq.read.bytes=524288   2      0..1    ≠\n" +
		"4170 of 4176 values equal over 72 scenarios\n"
	assert.Equal(t, [][2]string{{"read-cold-1m", "rq.read"}, {"read-cold-1m", "rq.read.bytes=524288"}}, differingRows(out))
	assert.Empty(t, differingRows("scenario  op  counter or result  model  kernel\n"))
}
