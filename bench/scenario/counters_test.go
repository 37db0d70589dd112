package scenario

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountFunctions checks that each Count* function counts the names it
// documents and that each name it builds round-trips: ParseCounter gives
// back the family expected, and the parsed name builds the same string.
// Together the cases must reach every declared family.
func TestCountFunctions(t *testing.T) {
	tests := []struct {
		name  string
		count func(cs *CounterSet)
		want  string                   // cs.Counters().String()
		fams  map[string]CounterFamily // the family of each counter
	}{
		{"bio write", func(cs *CounterSet) { CountBioQueued(cs, BioQueued{Dir: DirWrite, Bytes: 4096}) },
			"bio.write=1 bio.write.bytes=4096=1", map[string]CounterFamily{"bio.write": FamilyBio, "bio.write.bytes=4096": FamilyBioBytes}},
		{"flush bio", func(cs *CounterSet) { CountBioQueued(cs, BioQueued{Dir: DirWrite, Preflush: true}) },
			"bio.flush=1 bio.preflush=1", map[string]CounterFamily{"bio.flush": FamilyBio, "bio.preflush": FamilyBioPreflush}},
		{"fua readahead rmw", func(cs *CounterSet) {
			CountBioQueued(cs, BioQueued{Dir: DirRead, Bytes: 512, FUA: true, Ahead: true, InWrite: true})
		}, "bio.fua=1 bio.read=1 bio.read.ahead=1 bio.read.bytes=512=1 rmw.read.bios=1 rmw.read.bytes=512",
			map[string]CounterFamily{"bio.fua": FamilyBioFUA, "bio.read": FamilyBio, "bio.read.ahead": FamilyBioReadAhead,
				"bio.read.bytes=512": FamilyBioBytes, "rmw.read.bios": FamilyRMWBios, "rmw.read.bytes": FamilyRMWBytes}},
		{"write in a pwrite", func(cs *CounterSet) { CountBioQueued(cs, BioQueued{Dir: DirWrite, Bytes: 512, InWrite: true}) },
			"bio.write=1 bio.write.bytes=512=1", map[string]CounterFamily{"bio.write": FamilyBio, "bio.write.bytes=512": FamilyBioBytes}},
		{"discard", func(cs *CounterSet) { CountBioQueued(cs, BioQueued{Dir: DirDiscard, Bytes: 8192}) },
			"bio.discard=1 bio.discard.bytes=8192=1", map[string]CounterFamily{"bio.discard": FamilyBio, "bio.discard.bytes=8192": FamilyBioBytes}},
		{"split", CountBioSplit, "bio.split=1", map[string]CounterFamily{"bio.split": FamilyBioSplit}},
		{"merges", func(cs *CounterSet) {
			CountMerge(cs, MergeBack)
			CountMerge(cs, MergeFront)
			CountMerge(cs, MergeRq)
		}, "merge.back=1 merge.front=1 merge.rq=1",
			map[string]CounterFamily{"merge.back": FamilyMergeBack, "merge.front": FamilyMergeFront, "merge.rq": FamilyMergeRq}},
		{"getrq insert", func(cs *CounterSet) { CountGetRq(cs); CountRqInsert(cs) },
			"rq.get=1 rq.insert=1", map[string]CounterFamily{"rq.get": FamilyRqGet, "rq.insert": FamilyRqInsert}},
		{"read request", func(cs *CounterSet) { CountRqIssued(cs, RqIssued{Dir: DirRead, Bytes: 16384, Sectors: 32}) },
			"rq.read=1 rq.read.bytes=16384=1 sectors.read=32",
			map[string]CounterFamily{"rq.read": FamilyRq, "rq.read.bytes=16384": FamilyRqBytes, "sectors.read": FamilySectorsRead}},
		{"preflush fua write", func(cs *CounterSet) {
			CountRqIssued(cs, RqIssued{Dir: DirWrite, Bytes: 4096, Sectors: 8, Preflush: true, FUA: true})
		}, "rq.write=1 rq.write.bytes=4096=1 rq.write.fua=1 rq.write.preflush=1 sectors.written=8",
			map[string]CounterFamily{"rq.write": FamilyRq, "rq.write.bytes=4096": FamilyRqBytes, "rq.write.fua": FamilyRqFUA,
				"rq.write.preflush": FamilyRqPreflush, "sectors.written": FamilySectorsWritten}},
		{"flush request", func(cs *CounterSet) { CountRqIssued(cs, RqIssued{Dir: DirFlush, Preflush: true}) },
			"rq.flush=1", map[string]CounterFamily{"rq.flush": FamilyRq}},
		{"empty preflush write request", func(cs *CounterSet) { CountRqIssued(cs, RqIssued{Dir: DirWrite, Preflush: true}) },
			"rq.flush=1", map[string]CounterFamily{"rq.flush": FamilyRq}},
		{"complete", func(cs *CounterSet) { CountRqComplete(cs, 0) }, "rq.complete=1", map[string]CounterFamily{"rq.complete": FamilyRqComplete}},
		{"complete with ENOSPC", func(cs *CounterSet) { CountRqComplete(cs, 28) }, "rq.complete=1 rq.error=1 rq.error.errno=28=1",
			map[string]CounterFamily{"rq.complete": FamilyRqComplete, "rq.error": FamilyRqError, "rq.error.errno=28": FamilyRqErrno}},
		{"plug", func(cs *CounterSet) { CountPlug(cs); CountUnplug(cs, 3) }, "plug.plug=1 plug.unplug=1 plug.unplug.rqs=3",
			map[string]CounterFamily{"plug.plug": FamilyPlug, "plug.unplug": FamilyUnplug, "plug.unplug.rqs": FamilyUnplugRqs}},
		{"dirty", func(cs *CounterSet) { CountBufferDirty(cs); CountFolioDirty(cs) }, "buffer.dirty=1 pagecache.dirty=1",
			map[string]CounterFamily{"buffer.dirty": FamilyBufferDirty, "pagecache.dirty": FamilyFolioDirty}},
		{"folios", func(cs *CounterSet) { CountFolioAdd(cs, 2); CountFolioRemove(cs, 0) },
			"pagecache.add.order=2=1 pagecache.add.pages=4 pagecache.remove.order=0=1 pagecache.remove.pages=1",
			map[string]CounterFamily{"pagecache.add.order=2": FamilyFolioAdd, "pagecache.add.pages": FamilyFolioAddPages,
				"pagecache.remove.order=0": FamilyFolioRemove, "pagecache.remove.pages": FamilyFolioRemovePages}},
		{"readahead", func(cs *CounterSet) {
			CountReadaheadSync(cs)
			CountReadaheadAsync(cs)
			CountReadaheadOrder(cs, 2, 256)
			CountReadaheadUnbounded(cs, 16)
		}, "readahead.async=1 readahead.order=2=1 readahead.sync=1 readahead.unbounded.pages=16=1 readahead.window.pages=256=1",
			map[string]CounterFamily{"readahead.async": FamilyReadaheadAsync, "readahead.order=2": FamilyReadaheadOrder,
				"readahead.sync": FamilyReadaheadSync, "readahead.unbounded.pages=16": FamilyReadaheadUnbounded,
				"readahead.window.pages=256": FamilyReadaheadWindow}},
		{"wberr", func(cs *CounterSet) { CountWBErrSet(cs); CountWBErrReport(cs) }, "wberr.report=1 wberr.set=1",
			map[string]CounterFamily{"wberr.report": FamilyWBErrReport, "wberr.set": FamilyWBErrSet}},
		{"stat", func(cs *CounterSet) {
			CountStat(cs, DiskStat{ReadIOs: 1, WriteIOs: 5}, DiskStat{ReadIOs: 3, ReadMerges: 1, ReadSectors: 16, WriteIOs: 5,
				WriteMerges: 2, WriteSectors: 8, FlushIOs: 1})
		}, "stat.flush.ios=1 stat.read.ios=2 stat.read.merges=1 stat.read.sectors=16 stat.write.merges=2 stat.write.sectors=8",
			map[string]CounterFamily{"stat.flush.ios": FamilyStatIOs, "stat.read.ios": FamilyStatIOs, "stat.read.merges": FamilyStatMerges,
				"stat.read.sectors": FamilyStatSectors, "stat.write.merges": FamilyStatMerges, "stat.write.sectors": FamilyStatSectors}},
	}
	reached := map[CounterFamily]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs CounterSet
			tt.count(&cs)
			got := cs.Counters()
			assert.Equal(t, tt.want, got.String())
			require.Len(t, tt.fams, len(got), "a family for each counter")
			for _, c := range got {
				p, ok := ParseCounter(c.Name)
				require.True(t, ok, "%s belongs to no family", c.Name)
				assert.Equal(t, tt.fams[c.Name], p.Family, "%s's family", c.Name)
				assert.Equal(t, c.Name, p.String(), "%s round-trips", c.Name)
				reached[p.Family] = true
			}
		})
	}
	for _, f := range CounterFamilies() {
		assert.True(t, reached[f], "no Count* case counts family %s", f)
	}
}

// TestParseCounter checks the parts ParseCounter reads from a name and the
// names of no family it refuses.
func TestParseCounter(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
		want CounterName
	}{
		{"bio.write", true, CounterName{Family: FamilyBio, Dir: DirWrite}},
		{"bio.other", true, CounterName{Family: FamilyBio, Dir: DirOther}},
		{"bio.read.ahead", true, CounterName{Family: FamilyBioReadAhead}},
		{"rq.read.bytes=790528", true, CounterName{Family: FamilyRqBytes, Dir: DirRead, N: 790528}},
		{"rq.error.errno=28", true, CounterName{Family: FamilyRqErrno, N: 28}},
		{"rq.error.errno=-5", true, CounterName{Family: FamilyRqErrno, N: -5}},
		{"readahead.window.pages=0", true, CounterName{Family: FamilyReadaheadWindow}},
		{"stat.flush.ios", true, CounterName{Family: FamilyStatIOs, Dir: DirFlush}},
		{"", false, CounterName{}},
		{"bio", false, CounterName{}},
		{"bio.", false, CounterName{}},
		{"bio.sideways", false, CounterName{}},
		{"bio.writes", false, CounterName{}},
		{"bio.write.bytes=", false, CounterName{}},
		{"bio.write.bytes=4k", false, CounterName{}},
		{"bio.write.bytes=-1", false, CounterName{}},
		{"bio.write.bytes=+1", false, CounterName{}},
		{"bio.write.bytes=99999999999999999999", false, CounterName{}},
		{"rq.error.errno=-", false, CounterName{}},
		{"pagecache.add.order", false, CounterName{}},
		{"stat.read.ios.x", false, CounterName{}},
		{"sectors.write", false, CounterName{}},
		{"cpu.ns", false, CounterName{}},
	}
	for _, tt := range tests {
		got, ok := ParseCounter(tt.name)
		assert.Equal(t, tt.ok, ok, tt.name)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.name)
		}
	}
}

// TestCounterFamiliesRecorded checks the vocabulary against what Linux 6.18
// counted on the corpus: every recorded counter name belongs to a declared
// family and round-trips, and every counter the kernel's runs disagreed on
// is of a ranged family.
func TestCounterFamiliesRecorded(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("../../testdata/kernel/6.18", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 40, "the recordings")
	seen := map[CounterFamily]bool{}
	for _, file := range files {
		r, err := ReadResultFile(file)
		require.NoError(t, err)
		lists := []Counters{r.Total}
		for _, op := range r.Ops {
			lists = append(lists, op.Counters)
		}
		for _, cs := range lists {
			for _, c := range cs {
				p, ok := ParseCounter(c.Name)
				if !assert.True(t, ok, "%s: %s belongs to no family", r.Scenario, c.Name) {
					continue
				}
				seen[p.Family] = true
				assert.Equal(t, c.Name, p.String(), "%s: %s round-trips", r.Scenario, c.Name)
				if !c.Exact() {
					assert.False(t, p.Family.Deterministic(), "%s: %s varied (%s) but %s is deterministic", r.Scenario, c.Name, c, p.Family)
				}
			}
		}
	}
	// The corpus reaches most families; those it never sees are listed
	// here, so that a family the kernel stops counting shows.
	unseen := []CounterFamily{FamilyBioFUA, FamilyMergeFront, FamilyMergeRq, FamilyRqPreflush, FamilyRqFUA}
	for _, f := range unseen {
		assert.False(t, seen[f], "%s is recorded now: take it off the unseen list", f)
	}
	for _, f := range CounterFamilies() {
		if !seen[f] {
			assert.Contains(t, unseen, f, "no recording counts family %s", f)
		}
	}
}

// docFamily is one row of the counter table of docs/scenario-language.md.
type docFamily struct {
	Unit   CounterUnit
	Runs   string // "deterministic" or "ranged"
	Source string
}

// TestCounterFamiliesDocumented checks that docs/scenario-language.md's
// counter table lists exactly the declared families, in order, with their
// units, determinism and sources, and that the report line names the
// families' first parts that checkPattern accepts.
func TestCounterFamiliesDocumented(t *testing.T) {
	f, err := os.Open("../../docs/scenario-language.md")
	require.NoError(t, err)
	defer f.Close()
	var docOrder []string
	doc := map[string]docFamily{}
	in := false
	var roots []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if _, list, ok := strings.Cut(line, "with a counter family ("); ok && strings.HasPrefix(line, "| `report") {
			list, _, _ = strings.Cut(list, ")")
			for _, r := range strings.Split(list, ", ") {
				roots = append(roots, strings.Trim(r, "`"))
			}
		}
		if strings.HasPrefix(line, "## ") {
			in = line == "## Counters"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 5, "a row of 5 cells: %s", line)
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		docOrder = append(docOrder, cells[0])
		doc[cells[0]] = docFamily{CounterUnit(cells[1]), cells[2], cells[3]}
	}
	require.NoError(t, sc.Err())
	var order []string
	code := map[string]docFamily{}
	for _, fam := range CounterFamilies() {
		runs := "ranged"
		if fam.Deterministic() {
			runs = "deterministic"
		}
		order = append(order, fam.Pattern())
		code[fam.Pattern()] = docFamily{fam.Unit(), runs, fam.Source()}
	}
	assert.Equal(t, code, doc, "the documented families")
	assert.Equal(t, order, docOrder, "in declaration order")
	assert.Equal(t, counterRoots, roots, "the report line's counter families")
}

// TestCountAllocations checks that counting a bio and a request whose
// names were counted before allocates nothing (the model counts every bio).
func TestCountAllocations(t *testing.T) {
	var cs CounterSet
	count := func() {
		CountBioQueued(&cs, BioQueued{Dir: DirWrite, Bytes: 4096, FUA: true})
		CountRqIssued(&cs, RqIssued{Dir: DirWrite, Bytes: 131072, Sectors: 256, Preflush: true})
		CountRqComplete(&cs, 28)
		CountFolioAdd(&cs, 2)
		CountReadaheadOrder(&cs, 0, 32)
	}
	count()
	assert.Zero(t, testing.AllocsPerRun(100, count))
	assert.Equal(t, uint64(102), cs.Counters().Value("rq.write.bytes=131072"), "counted once before, once more by AllocsPerRun's warm-up, 100 times")
}

// TestDirString names each direction, and none out of range; a family
// out of range has no pattern and is not deterministic.
func TestDirString(t *testing.T) {
	for d, want := range map[Dir]string{DirRead: "read", DirWrite: "write", DirFlush: "flush", DirDiscard: "discard", DirOther: "other", numDirs: ""} {
		assert.Equal(t, want, d.String())
	}
	assert.Empty(t, numFamilies.Pattern())
	assert.False(t, numFamilies.Deterministic())
}
