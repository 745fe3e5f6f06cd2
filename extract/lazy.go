package extract

import (
	"fmt"
	"time"

	"github.com/pcptools/pcptools/format"
	"github.com/pcptools/pcptools/stream"
)

// Reading the inputs: opened when they are needed, parked after their
// first record, closed at their end (see the package doc).

// manyInputs is the threshold of the read options: with more inputs
// than this, every input reads through a small buffer (format.Streamed),
// with no checker goroutine. (The first eight opened used to get their
// share of the 8 MiB, a mapped volume and a checker: 0.5 MiB of the peak
// memory of a merge of 100 copies of one archive, for no measurable
// speed.)
const manyInputs = 64

// release closes the iterator of an input (its file, mapping and read
// buffer go), at its end or when it is parked.
func (e *Extractor) release(in *input) error {
	var err error
	in.rawOK = false // (its file is closed)
	if in.closer != nil {
		err = in.closer.Close()
		in.closer = nil
		e.open--
		if in.rbuf != nil {
			e.bufs = append(e.bufs, in.rbuf)
			in.rbuf = nil
		}
	}
	if in.arch != nil || in.state == stDone || in.state == stEOF {
		in.it = nil
	}
	if in.state == stDone || in.state == stEOF {
		in.buf, in.res.Body = nil, nil
	}
	return err
}

// park closes an archive input whose first record has been read: an
// input whose data starts later in the merge holds nothing open until
// then. Its pending record's time (the heap's key) is kept; unpark reads
// the archive again, from the start, up to that record.
func (e *Extractor) park(in *input) error {
	in.parked = true
	in.res.Body = nil
	in.buf = nil
	return e.release(in)
}

// unpark opens a parked input again and reads it up to the record that
// was pending when it was parked. The same records are read, with the
// same options, so the same record comes (an archive that is changed
// while it is read is an error); the pid and sequence number of pmcd
// (prologue) come out as they were.
func (e *Extractor) unpark(in *input) error {
	t, mark := in.res.T, in.mark
	in.parked = false
	in.state = stNeed
	if err := e.refill(in); err != nil {
		return err
	}
	if in.state != stResult || in.res.T != t || in.mark != mark {
		return fmt.Errorf("%s: the archive changed while it was read: its first record to merge, at %s, is no longer there", in.name, t)
	}
	return nil
}

// prime reads every input up to its first wanted record (all of them,
// in order, as pmlogextract does before it writes anything) and builds
// the heap; with lazy, archive inputs are then parked.
func (e *Extractor) prime() error {
	e.primed = true
	e.priming = true
	defer func() { e.priming = false }()
	for _, in := range e.ins {
		if in.state != stNeed {
			continue
		}
		if err := e.refill(in); err != nil {
			return err
		}
		if e.lazy && in.arch != nil && in.state == stResult {
			if err := e.park(in); err != nil {
				return err
			}
		}
		e.pushIfPending(in)
	}
	return nil
}

func (e *Extractor) pushIfPending(in *input) {
	switch in.state {
	case stResult:
		e.h.push(in)
	case stEOF:
		e.h.push(in)
		e.nEOF++
	}
}

// refill reads the next wanted data record of in, opening an archive
// input on its first call, and closing it at its end.
func (e *Extractor) refill(in *input) error {
	if in.it == nil && in.arch != nil {
		ropts := in.ropts
		// prime reads one record and parks the input: a small buffer,
		// not the input's share of the 8 MiB, which a hundred inputs
		// would each allocate and drop in turn. Many inputs, which may
		// all be open at once, each read a record at a time, as many
		// copies of one archive are: through a buffer of its share of
		// 512 KiB. A mapped volume would hold much more than its
		// window resident (the kernel maps the pages around each
		// fault, 64 KiB), and a checker goroutine each cost more than
		// it saves. The buffers are lent and taken back (release).
		if e.lazy && e.priming || e.many {
			if n := len(e.bufs); n > 0 {
				in.rbuf, e.bufs = e.bufs[n-1], e.bufs[:n-1]
			} else {
				in.rbuf = make([]byte, e.crowdBuf)
			}
			ropts = append(ropts[:len(ropts):len(ropts)], format.Streamed(), format.NoCheckAhead(), format.BufferSize(e.crowdBuf), format.ReadBuffer(in.rbuf))
		}
		it := in.arch.Records(ropts...)
		in.it, in.closer = it, it
		e.open++
	}
	for {
		if !in.it.Next() {
			if err := in.it.Err(); err != nil && !e.opts.stopAt(err) {
				return err
			}
			if e.started {
				in.state = stEOF
			} else {
				in.state = stDone
			}
			return e.release(in)
		}
		switch r := in.it.At().(type) {
		case *stream.Label:
			continue
		case *stream.Mark:
			in.last = r.T
			if e.opts.HasStart && r.T.Before(e.winS) {
				continue
			}
			in.res.T, in.res.Version = r.T, uint8(in.label.Version)
			in.res.Body = in.res.Body[:0]
			in.rawOK = false
			in.mark, in.state = true, stResult
			return nil
		case *stream.Result:
			in.last = r.T
			if r.NumPMID() == 5 {
				in.prologue(r)
			}
			if e.opts.HasStart && r.T.Before(e.winS) {
				if e.carry != nil {
					if err := e.noteCarry(r); err != nil {
						return fmt.Errorf("%s: %w", in.name, err)
					}
				}
				continue
			}
			in.res.T, in.res.Version = r.T, r.Version
			in.rawOK = false
			if e.noSel && len(e.store.skip) == 0 {
				// No copy: the body stays valid until this input's
				// iterator moves on, which is after it is written.
				in.res.Body = r.Body
				if rs, ok := in.it.(format.RawSource); ok {
					in.raw, in.rawOK = rs.RawRecord(r)
				}
			} else {
				var n int
				var err error
				in.buf, n, err = r.AppendSelected(in.buf[:0], e.pick)
				if err != nil {
					return fmt.Errorf("%s: result at %s: %w", in.name, r.T, err)
				}
				if n == 0 {
					continue
				}
				in.res.Body = in.buf
			}
			in.mark, in.state = false, stResult
			in.hasData = true
			return nil
		default:
			if in.inline {
				if _, err := e.store.add(in.idx, r, in.it); err != nil {
					return err
				}
			}
		}
	}
}

// prologue notes pmcd's pid and sequence number from a pmlogger prologue
// or epilogue record (5 metrics, pmcd.pid and pmcd.seqnum among them).
func (in *input) prologue(r *stream.Result) {
	it := r.VSets()
	for it.Next() {
		vs := it.VSet()
		if vs.NumVal < 1 || (vs.PMID != pmidPID && vs.PMID != pmidSeqnum) {
			continue
		}
		v, err := vs.Value(0)
		if err != nil {
			continue
		}
		if vs.PMID == pmidPID {
			if u, err := v.Uint64(stream.TypeU64); err == nil {
				in.pid = int64(u)
			}
		} else if u, err := v.Uint64(stream.TypeU32); err == nil {
			in.seqnum = int64(uint32(u))
		}
	}
}

// key is when an input's pending record sorts: its time, or for a pending
// end-of-input <mark>, the mark's time.
func (in *input) key() stream.Timestamp {
	if in.state == stEOF {
		return in.last.Add(time.Millisecond)
	}
	return in.res.T
}

// warmNext has the parked archive inputs likely to be unparked next (the
// two earliest among the heap's entries after the top: the second and
// third smallest keys are among its first seven) start decoding their
// first volumes, when those are compressed: archives that follow one
// another in time are read one at a time, and the next ones' first blocks
// then decode on other cores while this one is read
// (format.Archive.Warm); two ahead, because decoding a block takes longer
// than merging it. A window's start may lie anywhere in an archive: with
// one, nothing is warmed.
func (e *Extractor) warmNext() {
	if e.opts.HasStart {
		return
	}
	var first, second *heapEnt
	for k := 1; k < 7 && k < len(e.h); k++ {
		ent := &e.h[k]
		switch {
		case first == nil || ent.before(*first):
			first, second = ent, first
		case second == nil || ent.before(*second):
			second = ent
		}
	}
	for _, ent := range []*heapEnt{first, second} {
		if ent != nil && ent.in.parked && ent.in.arch != nil && !ent.in.warmed {
			ent.in.warmed = true
			ent.in.arch.Warm()
		}
	}
}
