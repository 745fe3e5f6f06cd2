package compress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Unix compress (.Z) decoding.
//
// Header: 1f 9d, then a byte whose low five bits are the largest code width
// (9..16) and whose top bit says "block mode" (code 256 clears the table).
// Codes start 9 bits wide and are packed LSB first. The writer emits them
// in groups of eight codes of one width, which is n bytes for n-bit codes.
// When the table outgrows the width, or after a clear code, the writer pads
// out the current group and continues with the next width at a byte
// boundary; the decoder skips the rest of the group the same way. These
// rules follow the behaviour of ncompress, the reference implementation.

const (
	lzwInitBits = 9
	lzwMaxBits  = 16
	lzwClear    = 256
)

var errLZWHeader = errors.New("not compress (.Z) data")

type lzwReader struct {
	r   *bufio.Reader
	off int64 // compressed bytes consumed, for error messages

	maxBits int
	block   bool
	maxMax  int // 1 << maxBits: table size

	nBits   int
	maxCode int // when freeEnt exceeds this the width grows
	freeEnt int
	oldCode int // -1 right after the start or a clear
	finChar byte

	group  [lzwMaxBits + 2]byte // the current group of codes, zero padded
	gBytes int                  // valid bytes in group
	gBit   int                  // next bit to read in group
	final  bool                 // group was cut short by the end of input

	prefix []uint16
	suffix []byte
	stack  []byte
	out    []byte // decoded bytes not yet returned
	err    error
	clears int // clear codes seen (tests check their vectors have some)
}

func newLZWReader(r io.Reader) (*lzwReader, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	var h [3]byte
	if n, err := io.ReadFull(br, h[:]); err != nil {
		if n >= 2 && h[0] == 0x1f && h[1] == 0x9d {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, errLZWHeader
	}
	if h[0] != 0x1f || h[1] != 0x9d {
		return nil, errLZWHeader
	}
	z := &lzwReader{
		r:       br,
		off:     3,
		maxBits: int(h[2] & 0x1f),
		block:   h[2]&0x80 != 0,
	}
	if z.maxBits < lzwInitBits || z.maxBits > lzwMaxBits {
		return nil, fmt.Errorf("unsupported maximum code width %d bits", z.maxBits)
	}
	z.maxMax = 1 << z.maxBits
	z.prefix = make([]uint16, z.maxMax)
	z.suffix = make([]byte, z.maxMax)
	z.stack = make([]byte, z.maxMax+1)
	z.reset()
	return z, nil
}

// reset starts a new code table, at the start and after a clear code.
func (z *lzwReader) reset() {
	z.nBits = lzwInitBits
	z.maxCode = 1<<lzwInitBits - 1
	if z.maxBits == lzwInitBits {
		z.maxCode = z.maxMax
	}
	z.freeEnt = 256
	if z.block {
		z.freeEnt = 257
	}
	z.oldCode = -1
}

// skipGroup drops the unread rest of the current group.
func (z *lzwReader) skipGroup() { z.gBit = z.gBytes * 8 }

// code returns the next code, or ok false at the end of the input.
func (z *lzwReader) code() (int, bool, error) {
	if z.gBit+z.nBits > z.gBytes*8 {
		if z.final {
			return 0, false, nil
		}
		z.group = [len(z.group)]byte{}
		n, err := io.ReadFull(z.r, z.group[:z.nBits])
		z.off += int64(n)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			z.final = true
		case err != nil:
			return 0, false, err
		}
		z.gBytes, z.gBit = n, 0
		if z.gBit+z.nBits > z.gBytes*8 {
			// Fewer bits left than a code: the writer's final padding.
			return 0, false, nil
		}
	}
	i := z.gBit >> 3
	v := uint32(z.group[i]) | uint32(z.group[i+1])<<8 | uint32(z.group[i+2])<<16
	c := int(v>>(z.gBit&7)) & (1<<z.nBits - 1)
	z.gBit += z.nBits
	return c, true, nil
}

func (z *lzwReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(z.out) > 0 {
			k := copy(p[n:], z.out)
			z.out = z.out[k:]
			n += k
			continue
		}
		if z.err != nil {
			break
		}
		z.err = z.step()
	}
	if n > 0 {
		return n, nil
	}
	return 0, z.err
}

// step decodes one code into z.out, or returns io.EOF or an error.
func (z *lzwReader) step() error {
	if z.freeEnt > z.maxCode {
		z.skipGroup()
		z.nBits++
		z.maxCode = 1<<z.nBits - 1
		if z.nBits == z.maxBits {
			z.maxCode = z.maxMax
		}
	}
	code, ok, err := z.code()
	if err != nil {
		return err
	}
	if !ok {
		return io.EOF
	}
	if code == lzwClear && z.block {
		z.clears++
		z.skipGroup()
		z.reset()
		return nil
	}
	sp := len(z.stack)
	if z.oldCode < 0 {
		if code >= 256 {
			return z.corrupt(code)
		}
		z.finChar = byte(code)
		z.oldCode = code
		sp--
		z.stack[sp] = z.finChar
		z.out = z.stack[sp:]
		return nil
	}
	in := code
	if code >= z.freeEnt {
		if code > z.freeEnt {
			return z.corrupt(code)
		}
		// The code being defined right now: its string is the previous
		// one plus that string's first byte.
		sp--
		z.stack[sp] = z.finChar
		code = z.oldCode
	}
	// Table chains strictly decrease (each entry's prefix was defined
	// before it), so this walk ends and fits the stack.
	for code >= 256 {
		sp--
		z.stack[sp] = z.suffix[code]
		code = int(z.prefix[code])
	}
	z.finChar = byte(code)
	sp--
	z.stack[sp] = z.finChar
	if z.freeEnt < z.maxMax {
		z.prefix[z.freeEnt] = uint16(z.oldCode)
		z.suffix[z.freeEnt] = z.finChar
		z.freeEnt++
	}
	z.oldCode = in
	z.out = z.stack[sp:]
	return nil
}

func (z *lzwReader) corrupt(code int) error {
	return fmt.Errorf("code %d before compressed byte %d is not defined yet (next free code %d)", code, z.off, z.freeEnt)
}
