//go:build !js

package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDDEqualsSweep(t *testing.T) {
	sizes := []string{"512", "2048", "4096", "16384"}
	r, err := DD(context.Background(), DDRequest{Machine: "helios4", Kernels: []string{"5.10.10", "6.18"}, BlockSizes: sizes, Count: 8})
	require.NoError(t, err)
	require.Len(t, r.Rows, 8)
	assert.Equal(t, "helios4", r.Profile)
	assert.Equal(t, "fitted", r.Costs)
	want := map[string]map[string][]string{"5.10.10": cliSweep(t, "5.10.10", sizes[:3], 8), "6.18": cliSweep(t, "6.18", sizes, 8)}
	for _, row := range r.Rows {
		if row.Kernel == "5.10.10" && row.BlockSizeChoice == "16384" {
			assert.Equal(t, "kernel 5.10.10: blocksize: set_blocksize(16384): above PAGE_SIZE (16384 > 4096)", row.Error)
			continue
		}
		assert.Empty(t, row.Error)
		assert.Equal(t, want[row.Kernel][row.BlockSizeChoice], []string{row.BiosText, row.RequestsText, row.MBpsText, row.Bottleneck}, "%s %s", row.Kernel, row.BlockSizeChoice)
	}
	assert.Equal(t, "bhsim sweep --machine helios4 --kernel 5.10.10,6.18 --blocksize 512,2048,4096,16384 --count 8", r.Command)
}

func TestDDErrors(t *testing.T) {
	ok := DDRequest{Machine: "helios4", Kernels: []string{"6.18"}, BlockSizes: []string{"4096"}, Count: 1}
	for _, tc := range []struct {
		name string
		edit func(r *DDRequest)
		want string
	}{
		{"machine", func(r *DDRequest) { r.Machine = "vax" }, "unknown machine \"vax\""},
		{"kernel", func(r *DDRequest) { r.Kernels = []string{"2.4"} }, "unknown kernel \"2.4\""},
		{"block size", func(r *DDRequest) { r.BlockSizes = []string{"3000"} }, "unknown block size \"3000\""},
		{"layout", func(r *DDRequest) { r.Layout = "raid5" }, "unknown layout"},
		{"bs", func(r *DDRequest) { r.BS = "huge" }, "huge"},
		{"too long", func(r *DDRequest) { r.Count = 2000 }, "moves more than the page runs (1G a cell)"},
		{"no kernel", func(r *DDRequest) { r.Kernels = nil }, "want at least one kernel and one block size"},
		{"profile", func(r *DDRequest) { r.Profile = "cray" }, "unknown profile \"cray\""},
		{"costs", func(r *DDRequest) { r.Costs = "cheap" }, "unknown costs \"cheap\""},
	} {
		req := ok
		tc.edit(&req)
		_, err := DD(context.Background(), req)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err := DD(context.Background(), ok)
	assert.NoError(t, err)
}

// letters returns the state letters of frame f's buffers.
func letters(f BufferFrame) []string {
	var out []string
	for _, b := range f.Folio.Buffers {
		out = append(out, b.Letters)
	}
	return out
}

func TestBuffersThroughWriteback(t *testing.T) {
	for _, bs := range []uint32{512, 1024, 2048, 4096} {
		r, err := Buffers(BuffersRequest{BlockSize: bs})
		require.NoError(t, err, bs)
		assert.Equal(t, bs, r.BlockSize)
		n := int(4096 / bs)
		phases := []string{}
		for _, f := range r.Frames {
			if len(phases) == 0 || phases[len(phases)-1] != f.Phase {
				phases = append(phases, f.Phase)
			}
		}
		assert.Equal(t, []string{"open", "write", "fsync", "done"}, phases, bs)
		assert.False(t, r.Frames[0].Folio.Cached, "before the write, the page is not cached")
		var written, last BufferFrame
		queued := 0
		for _, f := range r.Frames {
			switch f.Event {
			case "write returns":
				written = f
			case "block_bio_queue":
				queued++
				assert.Contains(t, f.Folio.Flags, "writeback", "a folio under writeback while its bios are queued")
				assert.Contains(t, f.Folio.Buffers[queued-1].State, "async_write", "the submitted buffer is under async write")
				assert.NotContains(t, f.Folio.Buffers[queued-1].State, "dirty", "its dirty bit was cleared before the submit")
			}
			last = f
		}
		assert.Equal(t, strings.Split(strings.Repeat("UDM ", n), " ")[:n], letters(written), "after the write every buffer is uptodate, dirty, mapped")
		assert.Equal(t, strings.Split(strings.Repeat("U-M ", n), " ")[:n], letters(last), "after fsync every buffer is clean and unlocked")
		assert.Equal(t, n, queued, "one bio per buffer")
		require.Len(t, last.Requests, 1, "the plug merges them into one request")
		assert.Equal(t, RequestView{Op: "write", Sector: 0, Sectors: 8, Bios: n, Issued: true, Completed: true}, last.Requests[0])
		assert.NotContains(t, last.Folio.Flags, "writeback")
	}
}

func TestBuffersLargeAndPartial(t *testing.T) {
	r, err := Buffers(BuffersRequest{Kernel: "6.18", BlockSize: 65536})
	require.NoError(t, err)
	last := r.Frames[len(r.Frames)-1]
	assert.Equal(t, uint64(16), last.Folio.Pages, "a 64 KiB block's folio is of order 4")
	assert.Len(t, last.Folio.Buffers, 1)
	assert.Equal(t, uint64(128), last.Requests[0].Sectors, "the write of one page writes the whole block")

	_, err = Buffers(BuffersRequest{Kernel: "5.10.10", BlockSize: 65536})
	assert.ErrorContains(t, err, "above PAGE_SIZE")
	_, err = Buffers(BuffersRequest{BlockSize: 1024, Offset: 4000, Length: 200})
	assert.ErrorContains(t, err, "leaves the first folio (4096 bytes)")
	_, err = Buffers(BuffersRequest{Kernel: "2.6"})
	assert.ErrorContains(t, err, "unknown kernel")

	r, err = Buffers(BuffersRequest{BlockSize: 1024, Offset: 100, Length: 10})
	require.NoError(t, err)
	var reads []BioView
	for _, f := range r.Frames {
		if f.Event == "write returns" {
			reads = f.Bios
			assert.Equal(t, "UDM", letters(f)[0], "the written block is dirty")
		}
	}
	require.NotEmpty(t, reads, "a partial write of a block not cached reads the block first")
	assert.Equal(t, "read", reads[0].Op)
}

func TestLRUSequence(t *testing.T) {
	r, err := LRU(LRURequest{Ops: DefaultLRUOps})
	require.NoError(t, err)
	assert.Equal(t, 16, r.Size)
	assert.Equal(t, uint32(4096), r.BlockSize, "6.4's grow policy: 4 KiB blocks on the 1 GiB loop device")
	require.Len(t, r.Steps, 24)
	at := func(call string, nth int) LRUStep {
		for _, s := range r.Steps {
			if s.Call == call {
				if nth--; nth == 0 {
					return s
				}
			}
		}
		t.Fatalf("no call %s", call)
		return LRUStep{}
	}
	assert.False(t, at("__bread(bdev, 1, 4096)", 1).Hit)
	assert.True(t, at("__find_get_block(bdev, 1, 4096)", 1).Hit, "the buffer read is found in the LRU")
	for _, n := range []int{1, 2} {
		s := at("__find_get_block(bdev, 1, 512)", n)
		assert.False(t, s.Hit, "Tosatti's size mismatch never hits")
		assert.Contains(t, s.Outcome, "Tosatti's case")
	}
	assert.Len(t, at("__bread(bdev, 16, 4096)", 1).Slots, 16)
	s17 := at("__bread(bdev, 17, 4096)", 1)
	assert.Equal(t, uint64(1), s17.Evicted, "the seventeenth buffer pushes one out")
	assert.Equal(t, LRUSlot{Block: 17, Size: 4096}, s17.Slots[0])
	assert.Equal(t, LRUSlot{Block: 2, Size: 4096}, s17.Slots[15], "block 1 was the oldest")
	f1 := at("__find_get_block(bdev, 1, 4096)", 2)
	assert.False(t, f1.Hit, "block 1 was pushed out")
	assert.Equal(t, uint64(16), f1.Steps, "its install runs the swap cascade over every slot")
	f9 := at("__find_get_block(bdev, 9, 4096)", 1)
	assert.True(t, f9.Hit)
	assert.Equal(t, uint64(10), f9.Scanned, "block 9 sat in slot 9")
	assert.Equal(t, LRUSlot{Block: 9, Size: 4096}, f9.Slots[0], "a hit moves the buffer to the front")
	assert.Empty(t, at("invalidate_bh_lrus()", 1).Slots)
	assert.False(t, at("__find_get_block(bdev, 9, 4096)", 2).Hit, "after the invalidation, a miss")

	for _, tc := range []struct {
		req  LRURequest
		want string
	}{
		{LRURequest{Ops: "bread x"}, "\"bread x\": want bread B"},
		{LRURequest{Ops: "find"}, "\"find\": want"},
		{LRURequest{Ops: " ; "}, "no call"},
		{LRURequest{Ops: "bread 1-5000"}, "want bread B"},
		{LRURequest{Ops: "find 1", Kernel: "6.4-nolru"}, "has no bh LRU"},
		{LRURequest{Ops: "bread 999999999"}, "__bread(bdev, 999999999, 4096)"},
	} {
		_, err := LRU(tc.req)
		assert.ErrorContains(t, err, tc.want, tc.req)
	}
}

func TestStepEqualsRunStep(t *testing.T) {
	for _, seed := range []uint64{1, 7, 42} {
		r, err := Step(context.Background(), StepRequest{Seed: seed})
		require.NoError(t, err)
		var texts []string
		for _, b := range r.Blocks {
			texts = append(texts, b.Text)
			assert.Empty(t, b.Answers)
		}
		assert.Equal(t, cliStep(t, seed, false, false), r.Header+"\n\n"+strings.Join(texts, "\n\n")+"\n\n", "seed %d", seed)

		q, err := Step(context.Background(), StepRequest{Seed: seed, Quiz: true})
		require.NoError(t, err)
		quiz := strings.Split(strings.TrimRight(cliStep(t, seed, true, false), "\n"), "\n\n")[1:]
		shown := strings.Split(strings.TrimRight(cliStep(t, seed, true, true), "\n"), "\n\n")[1:]
		require.Len(t, q.Blocks, len(quiz))
		for i, b := range q.Blocks {
			assert.Equal(t, quiz[i], b.Text)
			assert.Equal(t, shown[i], b.Answers)
		}
		assert.Equal(t, "bhsim run --step --quiz -s "+strconv.FormatUint(seed, 10), q.Command)
	}
	r, err := Step(context.Background(), StepRequest{Seed: 7, Kernel: "5.10.10"})
	require.NoError(t, err)
	assert.Contains(t, r.Header, "kernel 5.10.10")
	assert.Equal(t, "bhsim run --step -s 7 --kernel 5.10.10", r.Command)
	var rings int
	for _, b := range r.Blocks {
		for _, p := range b.Pages {
			rings += len(p.Buffers)
		}
	}
	assert.Positive(t, rings, "the page lines' buffers are picked out")
}

func TestCall(t *testing.T) {
	var a struct {
		Result Presets
		Error  string
	}
	require.NoError(t, json.Unmarshal([]byte(Call(context.Background(), "presets", "")), &a))
	assert.Empty(t, a.Error)
	assert.Contains(t, a.Result.Kernels, "6.18")
	assert.Contains(t, a.Result.BlockSizes, "65536")
	for _, tc := range []struct{ name, req, want string }{
		{"frobnicate", "{}", `unknown view \"frobnicate\" (valid: [buffers dd lru presets step])`},
		{"dd", "{", "web: request:"},
		{"lru", `{"ops": "x"}`, "want bread B"},
		{"buffers", `{"blockSize": "big"}`, "web: request:"},
	} {
		assert.Contains(t, Call(context.Background(), tc.name, tc.req), tc.want, tc.name)
	}
}

func TestSourceDir(t *testing.T) {
	dir, err := SourceDir(context.Background())
	require.NoError(t, err)
	assert.True(t, isModuleRoot(dir))
	assert.FileExists(t, filepath.Join(dir, "bench", "web", "wasm", "main.go"))
	assert.False(t, isModuleRoot(t.TempDir()))
}

func TestHandler(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bhsim.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "wasm_exec.js"), []byte("// go"), 0o644))
	srv := httptest.NewServer(Handler(dir))
	defer srv.Close()
	for _, tc := range []struct {
		path, typ, body string
		status          int
	}{
		{"/", "text/html", "<title>bhsim", 200},
		{"/app.js", "javascript", "bhsim.call", 200},
		{"/style.css", "text/css", "--focus", 200},
		{"/bhsim.wasm", "application/wasm", "asm", 200},
		{"/wasm_exec.js", "javascript", "// go", 200},
		{"/serve.go", "", "", 404},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, tc.path)
		if tc.status == 200 {
			assert.Contains(t, resp.Header.Get("Content-Type"), tc.typ, tc.path)
			assert.Contains(t, string(body), tc.body, tc.path)
			assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"), tc.path)
		}
	}
}

// TestWasmLeavesOutHostAndCharts checks what the WebAssembly carries: the
// model, not the host-kernel runner (linux-only, and no use in a
// browser), nor bench/report's charts and fonts, which would double its
// size.
func TestWasmLeavesOutHostAndCharts(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./bench/web/wasm")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	assert.Contains(t, deps, "github.com/bhsim/bhsim/bench/web")
	assert.Contains(t, deps, "github.com/bhsim/bhsim/bufcache")
	for _, p := range deps {
		assert.NotContains(t, p, "bhsim/bench/host")
		assert.NotContains(t, p, "bhsim/bench/report")
		assert.NotContains(t, p, "gonum.org/v1/plot")
		assert.NotContains(t, p, "net/http")
	}
}
