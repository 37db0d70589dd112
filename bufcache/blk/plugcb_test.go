package blk

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logCB is a PlugCallback that appends its name to a shared log when it runs,
// then runs its optional work.
type logCB struct {
	name string
	log  *[]string
	work func(p *Plug)
}

// Unplug implements PlugCallback.
func (c *logCB) Unplug(p *Plug) {
	*c.log = append(*c.log, c.name)
	if c.work != nil {
		c.work(p)
	}
}

// cbMaker makes logCBs named after their key and counts how many it made.
type cbMaker struct {
	log  []string
	made int
}

// make is a CheckPlugged constructor.
func (m *cbMaker) make(key any) PlugCallback {
	m.made++
	return &logCB{name: key.(string), log: &m.log}
}

// TestPlugCallbackOrder registers keys in sequence and checks what runs at
// the flush: each key once, newest registration first (blk_check_plugged adds
// to the head of cb_list), and nothing at a second flush.
func TestPlugCallbackOrder(t *testing.T) {
	tests := []struct {
		name     string
		keys     []string
		wantRun  []string
		wantMade int
	}{
		{"one", []string{"md0"}, []string{"md0"}, 1},
		{"once per key", []string{"md0", "md0", "md0"}, []string{"md0"}, 1},
		{"newest first", []string{"md0", "md1", "md2"}, []string{"md2", "md1", "md0"}, 3},
		{"order of first registration", []string{"md0", "md1", "md0", "md2", "md1"}, []string{"md2", "md1", "md0"}, 3},
	}
	for _, tc := range tests {
		for _, viaFlush := range []bool{false, true} {
			name := tc.name + "/finish"
			if viaFlush {
				name = tc.name + "/flush"
			}
			t.Run(name, func(t *testing.T) {
				var m cbMaker
				var p Plug
				p.Start()
				got := map[string]PlugCallback{}
				for _, k := range tc.keys {
					cb := p.CheckPlugged(k, m.make)
					require.NotNil(t, cb)
					if prev, ok := got[k]; ok {
						assert.Same(t, prev, cb, "key %s registered again", k)
					}
					got[k] = cb
				}
				assert.Equal(t, tc.wantMade, m.made)
				assert.Empty(t, m.log, "nothing runs before the flush")
				if viaFlush {
					p.Flush()
					assert.True(t, p.Active(), "Flush leaves the plug started")
				} else {
					require.NoError(t, p.Finish())
				}
				assert.Equal(t, tc.wantRun, m.log)
				p.Flush()
				assert.Equal(t, tc.wantRun, m.log, "a callback runs once")
			})
		}
	}
}

// TestPlugCallbackNotStarted: with no plug, or one not started, CheckPlugged
// registers nothing and does not call the constructor.
func TestPlugCallbackNotStarted(t *testing.T) {
	never := func(any) PlugCallback {
		t.Error("constructor called without a started plug")
		return nil
	}
	var nilPlug *Plug
	assert.Nil(t, nilPlug.CheckPlugged("md0", never))
	var p Plug
	assert.Nil(t, p.CheckPlugged("md0", never))
	p.Start()
	require.NoError(t, p.Finish())
	assert.Nil(t, p.CheckPlugged("md0", never), "finished")
}

// TestPlugCallbackNested: a nested Finish runs nothing; the outermost runs the
// callbacks registered at any depth.
func TestPlugCallbackNested(t *testing.T) {
	var m cbMaker
	var p Plug
	p.Start()
	p.CheckPlugged("outer", m.make)
	p.Start()
	p.CheckPlugged("inner", m.make)
	require.NoError(t, p.Finish())
	assert.Empty(t, m.log, "the inner Finish flushes nothing")
	require.NoError(t, p.Finish())
	assert.Equal(t, []string{"inner", "outer"}, m.log)
}

// TestPlugCallbackBeforeRequests: the callbacks run before the plugged
// requests are dispatched, at Finish, at Flush and when a full plug is
// flushed by a submission.
func TestPlugCallbackBeforeRequests(t *testing.T) {
	tests := []struct {
		name  string
		flush func(t *testing.T, p *Plug, q *Queue, c *completions)
	}{
		{"finish", func(t *testing.T, p *Plug, _ *Queue, _ *completions) { require.NoError(t, p.Finish()) }},
		{"flush", func(_ *testing.T, p *Plug, _ *Queue, _ *completions) { p.Flush() }},
		{"full plug", func(_ *testing.T, p *Plug, q *Queue, c *completions) {
			SubmitBio(p, q, c.pageBio(1, OpWrite, 1000, 4096, 9, 0)) // not contiguous: the plug of one is full
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096))
			c := newCompletions()
			p := Plug{MaxRequests: 1}
			p.Start()
			SubmitBio(&p, q, c.pageBio(0, OpWrite, 0, 4096, 1, 0))
			var log []string
			var plugged, dispatched []int
			p.CheckPlugged("md0", func(any) PlugCallback {
				return &logCB{name: "md0", log: &log, work: func(p *Plug) {
					plugged = append(plugged, p.Len())
					dispatched = append(dispatched, len(c.order))
				}}
			})
			tc.flush(t, &p, q, c)
			assert.Equal(t, []string{"md0"}, log)
			assert.Equal(t, []int{1}, plugged, "the request still waited in the plug")
			assert.Equal(t, []int{0}, dispatched, "nothing dispatched before the callback")
			assert.Equal(t, []int{0}, c.order, "then the request was dispatched")
		})
	}
}

// TestPlugCallbackSubmits: a callback that submits bios through the plug and
// registers another callback. The plug is still started while the callbacks
// run, under Flush and under the outermost Finish alike: the bios wait in it,
// merge, and go out in the same flush, after the callbacks, and the new
// callback runs in that flush too, after the ones registered before it.
func TestPlugCallbackSubmits(t *testing.T) {
	tests := []struct {
		name         string
		finish       bool
		wantLog      []string
		wantPlugged  int // plugged requests the callback saw after submitting
		wantRequests uint64
		wantOrder    []int
	}{
		{"flush", false, []string{"md1", "md0", "md0 again"}, 1, 1, []int{1, 2, 3}},
		{"finish", true, []string{"md1", "md0", "md0 again"}, 1, 1, []int{1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096))
			c := newCompletions()
			var log []string
			var p Plug
			p.Start()
			sawPlugged := -1
			again := func(any) PlugCallback {
				return &logCB{name: "md0 again", log: &log, work: func(p *Plug) {
					SubmitBio(p, q, c.pageBio(3, OpWrite, 16, 4096, 3, 0))
				}}
			}
			p.CheckPlugged("md0", func(any) PlugCallback {
				return &logCB{name: "md0", log: &log, work: func(p *Plug) {
					// Two contiguous bios: under a started plug they merge.
					SubmitBio(p, q, c.pageBio(1, OpWrite, 0, 4096, 1, 0))
					SubmitBio(p, q, c.pageBio(2, OpWrite, 8, 4096, 2, 0))
					sawPlugged = p.Len()
					p.CheckPlugged("md0", again) // the running callback is off the list
				}}
			})
			p.CheckPlugged("md1", func(any) PlugCallback { return &logCB{name: "md1", log: &log} })
			if tc.finish {
				require.NoError(t, p.Finish())
			} else {
				p.Flush()
			}
			assert.Equal(t, tc.wantLog, log)
			assert.Equal(t, tc.wantPlugged, sawPlugged)
			assert.Equal(t, tc.wantRequests, q.Stats().Write.Requests)
			assert.Equal(t, tc.wantOrder, c.order)
			assert.Zero(t, p.Len(), "everything dispatched in the same flush")
		})
	}
}

// TestPlugCallbackAllocs: registering and running a callback allocates
// nothing once the plug's lists have grown.
func TestPlugCallbackAllocs(t *testing.T) {
	var log []string
	cb := &logCB{name: "md0", log: &log}
	newCB := func(any) PlugCallback { return cb }
	key := &log // a pointer key, as a device is
	var p Plug
	cycle := func() {
		p.Start()
		p.CheckPlugged(key, newCB)
		p.CheckPlugged(key, newCB)
		_ = p.Finish()
		log = log[:0]
	}
	log = make([]string, 0, 4)
	cycle()
	assert.Zero(t, testing.AllocsPerRun(100, cycle))
}

// FuzzPlugCallbacks runs a sequence of plug operations — Start, Finish,
// Flush, CheckPlugged with one of four keys, and submissions of 4 KiB bios
// that never merge — against a model of the plug: a key is registered once
// per flush, the callbacks run at Flush, at the outermost Finish and when a
// full plug (16 requests) is flushed, newest registration first, each once,
// before the plugged requests are dispatched; with no started plug nothing
// registers and bios go out at once.
//
// Input: one byte per operation: bits 0–2 choose the operation (0 Start,
// 1 Finish, 2 Flush, 3–4 CheckPlugged, 5–7 submit), bits 3–4 the key.
func FuzzPlugCallbacks(f *testing.F) {
	f.Add([]byte{0, 3, 11, 5, 19, 27, 3, 1})
	f.Add([]byte{0, 0, 3, 1, 11, 1, 2, 1})
	f.Add([]byte{0, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 11, 2, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q := newQueue(t, "sda", 1<<20, Null{}, DefaultLimits(512, 4096))
		c := newCompletions()
		var p Plug
		var log []string
		var sawDispatched []int // completions seen by each callback run
		made := 0
		newCB := func(key any) PlugCallback {
			made++
			return &logCB{name: key.(string), log: &log, work: func(*Plug) { sawDispatched = append(sawDispatched, len(c.order)) }}
		}
		// The model.
		depth, plugged, submitted := 0, 0, 0
		var registered []string
		var wantLog []string
		flush := func() {
			for i := len(registered) - 1; i >= 0; i-- {
				wantLog = append(wantLog, registered[i])
			}
			registered = registered[:0]
			plugged = 0
		}
		for i, op := range ops {
			if i == 256 {
				break
			}
			key := string(rune('a' + op>>3&3))
			runsBefore, doneBefore := len(log), len(c.order)
			switch op & 7 {
			case 0:
				p.Start()
				depth++
			case 1:
				err := p.Finish()
				if depth == 0 {
					require.ErrorIs(t, err, ErrPlugNotStarted)
					break
				}
				require.NoError(t, err)
				if depth--; depth == 0 {
					flush()
				}
			case 2:
				p.Flush()
				flush()
			case 3, 4:
				before := made
				cb := p.CheckPlugged(key, newCB)
				switch {
				case depth == 0:
					require.Nil(t, cb)
					require.Equal(t, before, made)
				case slices.Contains(registered, key):
					require.Equal(t, before, made, "key %s registered once", key)
				default:
					require.Equal(t, before+1, made)
					registered = append(registered, key)
				}
			default:
				SubmitBio(&p, q, c.pageBio(submitted, OpWrite, uint64(16*submitted%2048), 4096, uint64(submitted), 0))
				submitted++
				if depth > 0 {
					if plugged >= PlugMaxRequests {
						flush()
					}
					plugged++
				}
			}
			require.Equal(t, wantLog, log, "op %d", i)
			require.Equal(t, plugged, p.Len(), "op %d", i)
			for _, n := range sawDispatched[runsBefore:] {
				require.Equal(t, doneBefore, n, "op %d: a callback ran after requests were dispatched", i)
			}
			require.Equal(t, submitted-plugged, len(c.order), "op %d: dispatched", i)
		}
	})
}
