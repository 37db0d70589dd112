package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bhsim/bhsim/bench/threads"
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

// commandRun is one command line's run through shared.
type commandRun struct {
	once           sync.Once
	status         int
	stdout, stderr string
}

// commandRuns holds every command line shared has run, by its arguments.
var commandRuns sync.Map

// shared runs bhsim with args the first time any test asks for that command
// line and gives every later ask the same exit status and output: a
// command's output depends only on its arguments and the files they name
// (its simulated figures on nothing else), so the tests that check one
// command line check what each would see running it alone. Not for a
// command that writes files (--plot).
func shared(args ...string) (int, string, string) {
	v, _ := commandRuns.LoadOrStore(strings.Join(args, "\x00"), new(commandRun))
	r := v.(*commandRun)
	r.once.Do(func() { r.status, r.stdout, r.stderr = bhsim(args...) })
	return r.status, r.stdout, r.stderr
}

// reproducesAll reports whether args are `reproduce` of every thread: no
// thread named, whatever the flags.
func reproducesAll(args []string) bool {
	if args[0] != "reproduce" {
		return false
	}
	for _, th := range threads.All() {
		if slices.Contains(args[1:], th.Name) {
			return false
		}
	}
	return true
}

// fromPackage returns args with each relative path of the repository that
// the README's commands name (from its root, where a reader runs them) made
// relative to this package's directory, where the tests run: the commands
// run side by side, so none can change the process's directory (t.Chdir).
// Only an argument with a slash is a path: "lru" is a thread, not the
// package's directory.
func fromPackage(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if strings.HasPrefix(a, "-") || !strings.Contains(a, "/") || filepath.IsAbs(a) {
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", a)); err == nil {
			out[i] = filepath.Join("../..", a)
		}
	}
	return out
}

// TestReadmeCommands runs every bhsim command the README shows and checks
// that it succeeds, and that the figures the README quotes from them are
// what they print. The commands run in parallel (the live one, as root,
// alone first), and a quoted figure's command is the same run as the
// README's line that shows it. The two that reproduce every thread are
// left to .ci/run, which runs the README's main command as given, and to
// bench/threads, whose tests check the tables and charts (TestReproduce…,
// TestCommittedFiguresAreCurrent) on one full-size run: here they would
// make those runs a second time.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() || race.Enabled {
		t.Skip("runs the README's commands: not under -short or -race")
	}
	cmds := readmeCommands(t)
	require.GreaterOrEqual(t, len(cmds), 8, "the README shows its commands")
	for _, args := range cmds {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			live := strings.Contains(strings.Join(args, " "), "--on host")
			if live && os.Getenv("BHSIM_KERNEL") != "1" {
				t.Skip("runs on the host kernel: set BHSIM_KERNEL=1 (as root)")
			}
			if reproducesAll(args) {
				t.Skip("every thread at full size, half a minute of CPU: .ci/run runs it as the README gives it, " +
					"and bench/threads checks its tables and charts at full size")
			}
			if !live {
				t.Parallel()
			}
			args = fromPackage(args)
			if i := slices.Index(args, "--plot"); i >= 0 && i+1 < len(args) {
				args[i+1] = t.TempDir() // the charts go nowhere lasting
			}
			status, out, errs := shared(args...)
			// A live run may differ where docs/known-differences.md says
			// it can (report.LiveDifferences), and still exits 0.
			require.Equal(t, 0, status, errs)
			assert.NotEmpty(t, out)
		})
	}
	t.Run("quoted figures", func(t *testing.T) {
		t.Parallel()
		b, err := os.ReadFile("../../README.md")
		require.NoError(t, err)
		quoted := regexp.MustCompile(`write-page --bsize 512 --layout raid10n2\x60 ends at ([0-9.]+) MB/s`).FindSubmatch(b)
		require.NotNil(t, quoted, "the README quotes explain write-page's figure")
		_, out, _ := shared("explain", "write-page", "--bsize", "512", "--layout", "raid10n2")
		assert.Contains(t, out, "so "+string(quoted[1])+" MB/s")
		excerpt := regexp.MustCompile("(?s)The generator's run prints, after its header:\n\n```\n(.*?)```").FindSubmatch(b)
		require.NotNil(t, excerpt, "the README quotes a workload's distributions")
		_, out, _ = shared("run", "--gen", "random:dev=64M,n=20000,reads=0.5,cpus=4,fsync=1000", "-s", "7")
		assert.Contains(t, out, string(excerpt[1]), "the quoted distributions are what the command prints")
		summary := regexp.MustCompile(`\d+ of \d+ values equal over \d+ scenarios[^\n]*`).Find(b)
		require.NotNil(t, summary, "the README quotes validate's summary")
		_, out, _ = shared("validate", "../../testdata/scenarios")
		assert.Contains(t, out, string(summary))
		timed := regexp.MustCompile(`(?s)--rows all testdata/timed\x60.*?\n\x60\x60\x60\n(.*?)\x60\x60\x60`).FindSubmatch(b)
		require.NotNil(t, timed, "the README quotes the timed corpus's validate")
		status, out, _ := shared("validate", "--rows", "all", "../../testdata/timed")
		assert.Equal(t, 1, status, "the request counters differ under throttle rules (docs/known-differences.md)")
		for _, line := range strings.Split(strings.TrimSpace(string(timed[1])), "\n") {
			if line != "…" {
				assert.Contains(t, squash(out), squash(line), "a quoted line validate prints")
			}
		}
	})
}

// squash is s with each run of blanks made one space: the quoted lines'
// columns are narrower than a full run's.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

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
	// -trimpath: the build cache then serves the temporary module from one
	// run to the next (without it every path differs, and bhsim compiles anew)
	run("go", "build", "-trimpath", "-o", os.DevNull, ".")
}
