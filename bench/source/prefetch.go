package source

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// prefetchBatch is how many records a Prefetcher's goroutine reads before
// handing them over; prefetchDepth is how many such batches may wait.
const (
	prefetchBatch = 1024
	prefetchDepth = 4
)

// ErrClosed is what a Prefetcher's Next returns after its Close: the
// records stopped there, which is not the trace's end.
var ErrClosed = errors.New("source: the trace's reader was closed")

// Prefetcher reads an IOReader ahead in a goroutine of its own, so that the
// reading — a trace's decompression and parsing — runs on another CPU than
// the one that consumes the records. Next returns r's records in r's order
// and then r's error (io.EOF at the end), exactly as r would. At most
// prefetchBatch × (prefetchDepth + 2) records are held.
//
// The goroutine owns r: it closes r (when r is an io.Closer) once r has
// returned an error or Close was called and its read in progress ended.
// Close cannot end a read that blocks — r.Next on a pipe whose writer
// neither writes nor closes keeps the goroutine until it returns. A
// Prefetcher is read by one goroutine; Close may be called from any, once
// or more. Next allocates nothing once its batches have been recycled.
type Prefetcher struct {
	full    chan prefetched // batches read, in order
	empty   chan []IO       // batches handed back for reuse
	done    chan struct{}   // closed by Close
	stopped atomic.Bool     // set by Close
	once    sync.Once
	cur     prefetched
	pos     int
	ended   bool
	// consumed is the reader's Consumed, nil when it has none, and size
	// the file's size it gave when Prefetch began; records and bytes are
	// how many records the goroutine had read, and how many bytes of the
	// file, when it last finished a batch.
	consumed func() (read, size int64)
	size     int64
	records  atomic.Uint64
	bytes    atomic.Int64
}

// Progress returns how far the goroutine had read when it last finished
// a batch: the records read, and for a reader with Consumed (a trace
// file, Trace.Consumed) the bytes of its file read then and the file's
// size ((0, 0) otherwise). Records and bytes are of one moment, so that
// records × size / bytes estimates the file's records (the bytes read
// ahead into the reader's buffers make it a little low). Safe from any
// goroutine. O(1).
func (p *Prefetcher) Progress() (records uint64, read, size int64) {
	return p.records.Load(), p.bytes.Load(), p.size
}

// prefetched is one batch of records and, for the last, r's error.
type prefetched struct {
	recs []IO
	err  error
}

// Prefetch starts reading r ahead and returns the Prefetcher that hands out
// its records. Call Close when done with it, at the end or before.
func Prefetch(r IOReader) *Prefetcher {
	p := &Prefetcher{full: make(chan prefetched, prefetchDepth), empty: make(chan []IO, prefetchDepth+2), done: make(chan struct{})}
	if c, ok := r.(interface{ Consumed() (int64, int64) }); ok {
		p.consumed = c.Consumed
		_, p.size = c.Consumed()
	}
	go p.read(r)
	return p
}

// read is the goroutine: batches of r's records into full until r fails or
// Close is called, then r closed.
func (p *Prefetcher) read(r IOReader) {
	defer func() {
		if c, ok := r.(io.Closer); ok {
			c.Close()
		}
	}()
	for {
		var recs []IO
		select {
		case recs = <-p.empty:
			recs = recs[:0]
		default:
			recs = make([]IO, 0, prefetchBatch)
		}
		var err error
		for len(recs) < prefetchBatch {
			if p.stopped.Load() {
				return
			}
			var rec IO
			if rec, err = r.Next(); err != nil {
				break
			}
			recs = append(recs, rec)
		}
		if p.consumed != nil {
			read, _ := p.consumed()
			p.bytes.Store(read)
		}
		p.records.Add(uint64(len(recs)))
		select {
		case p.full <- prefetched{recs, err}:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Next implements IOReader: the next of r's records, or r's error after the
// last (and again on every later call). After Close it returns ErrClosed.
func (p *Prefetcher) Next() (IO, error) {
	for p.pos == len(p.cur.recs) || p.stopped.Load() {
		if p.stopped.Load() {
			p.cur, p.pos, p.ended = prefetched{err: ErrClosed}, 0, true
		}
		if p.ended {
			return IO{}, p.cur.err
		}
		if p.cur.recs != nil {
			select {
			case p.empty <- p.cur.recs:
			default:
			}
		}
		select {
		case b := <-p.full:
			p.cur, p.pos = b, 0
			p.ended = b.err != nil
		case <-p.done:
			p.cur, p.pos, p.ended = prefetched{err: ErrClosed}, 0, true
		}
	}
	rec := p.cur.recs[p.pos]
	p.pos++
	return rec, nil
}

// Close stops the reading: the goroutine stops after the record it is
// reading and closes r. Records not yet returned are dropped. It returns
// at once, and always nil.
func (p *Prefetcher) Close() error {
	p.once.Do(func() {
		p.stopped.Store(true)
		close(p.done)
	})
	return nil
}
