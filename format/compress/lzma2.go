package compress

import (
	"errors"
	"fmt"
)

// An LZMA2 decoder for one xz block decoded whole into a buffer of its
// known size (see the package documentation for why it exists beside
// ulikunitz/xz). Because the whole output is one flat slice, the
// dictionary is the output itself: a match is a copy within dst, with no
// circular buffer and no second copy out of it.
//
// LZMA2 is a sequence of chunks, each starting with a control byte:
//
//	0x00              end of the data
//	0x01, 0x02        uncompressed chunk (0x01 resets the dictionary):
//	                  size-1 (2 bytes, big endian), then the bytes
//	0x80 | r<<5 | u   LZMA chunk: u = bits 16..20 of size-1; then bits 0..15
//	                  of size-1 (2 bytes), compressed size-1 (2 bytes), and a
//	                  properties byte when r >= 2. r: 0 nothing reset,
//	                  1 state reset, 2 state reset and new properties,
//	                  3 all that and a dictionary reset
//
// Every LZMA chunk has its own range coder (initialised by its first five
// bytes, the first zero) that must end exactly at the chunk's end with its
// code at zero; the LZMA state and probabilities carry over between chunks
// unless reset; a match never crosses a chunk boundary. The first chunk
// must reset the dictionary, and an LZMA chunk after a dictionary reset
// must set properties. Those are the rules xz's liblzma applies.

// lzma2Error is a damaged LZMA2 stream: in is the offset in the LZMA2 data,
// out the decompressed bytes produced before it.
type lzma2Error struct {
	in, out int64
	msg     string
}

func (e *lzma2Error) Error() string {
	return fmt.Sprintf("LZMA2 data offset %d (after %d decompressed bytes): %s", e.in, e.out, e.msg)
}

var errLZMA2Short = errors.New("LZMA2 data ends before its end marker")

const (
	lzmaStates       = 12
	lzmaPosStatesMax = 16
	lzmaLenLow       = 8
	lzmaLenMid       = 8
	lzmaLenHigh      = 256
	lzmaDistStates   = 4
	lzmaEndPosModel  = 14
	lzmaFullDists    = 128
	lzmaAlignBits    = 4
	lzmaMatchMinLen  = 2
	lzmaProbInit     = 1 << 10
	lzmaProbBits     = 11
	lzmaMoveBits     = 5
	lzmaTopValue     = 1 << 24
	lzmaLiteralProbs = 0x300
	lzmaProbAdapt    = 1<<lzmaProbBits - 1<<lzmaMoveBits + 1
)

// lzmaProb is an adaptive probability (11 bits). It is held in 32 bits
// because conversions in rangeDec.bit would push it over the compiler's
// inlining budget.
type lzmaProb = uint32

type lzmaLenProbs struct {
	choice, choice2 lzmaProb
	low             [lzmaPosStatesMax][lzmaLenLow]lzmaProb
	mid             [lzmaPosStatesMax][lzmaLenMid]lzmaProb
	high            [lzmaLenHigh]lzmaProb
}

// lzmaProbs is every adaptive probability of the LZMA model but the
// literal coder's, whose size depends on lc+lp.
type lzmaProbs struct {
	isMatch    [lzmaStates << 4]lzmaProb
	isRep      [lzmaStates]lzmaProb
	isRepG0    [lzmaStates]lzmaProb
	isRepG1    [lzmaStates]lzmaProb
	isRepG2    [lzmaStates]lzmaProb
	isRep0Long [lzmaStates << 4]lzmaProb
	posSlot    [lzmaDistStates][64]lzmaProb
	posSpecial [1 + lzmaFullDists - lzmaEndPosModel]lzmaProb
	align      [1 << lzmaAlignBits]lzmaProb
	lenDec     lzmaLenProbs
	repLenDec  lzmaLenProbs
}

// lzma2Decoder keeps the state that outlives a chunk.
type lzma2Decoder struct {
	p        lzmaProbs
	literal  []lzmaProb
	lc, lp   uint
	pb       uint
	state    uint32
	rep      [4]uint32
	dictSize int64
}

func (d *lzma2Decoder) setProps(b byte) bool {
	if b >= 9*5*5 {
		return false
	}
	lc := uint(b % 9)
	b /= 9
	lp := uint(b % 5)
	pb := uint(b / 5)
	if lc+lp > 4 {
		return false
	}
	d.lc, d.lp, d.pb = lc, lp, pb
	n := lzmaLiteralProbs << (lc + lp)
	if cap(d.literal) < n {
		d.literal = make([]lzmaProb, n)
	}
	d.literal = d.literal[:n]
	return true
}

func (d *lzma2Decoder) resetState() {
	fill := func(s []lzmaProb) {
		for i := range s {
			s[i] = lzmaProbInit
		}
	}
	p := &d.p
	fill(p.isMatch[:])
	fill(p.isRep[:])
	fill(p.isRepG0[:])
	fill(p.isRepG1[:])
	fill(p.isRepG2[:])
	fill(p.isRep0Long[:])
	for i := range p.posSlot {
		fill(p.posSlot[i][:])
	}
	fill(p.posSpecial[:])
	fill(p.align[:])
	for _, l := range []*lzmaLenProbs{&p.lenDec, &p.repLenDec} {
		l.choice, l.choice2 = lzmaProbInit, lzmaProbInit
		for i := range l.low {
			fill(l.low[i][:])
			fill(l.mid[i][:])
		}
		fill(l.high[:])
	}
	fill(d.literal)
	d.state = 0
	d.rep = [4]uint32{}
}

// decodeLZMA2 decodes the LZMA2 data at the start of src into dst, which
// must be exactly as long as the data decodes to, and returns how many
// bytes of src the data took, end marker included. src is copied unless
// it has lzmaSlack bytes of capacity past its length. dictSize is the
// dictionary size the block header declares: no match may reach further
// back.
func decodeLZMA2(dst, src []byte, dictSize int64) (int, error) {
	_, n, err := decodeLZMA2Prefix(dst, src, dictSize, len(dst))
	return n, err
}

// lzma2MaxChunk is the most one LZMA2 chunk decodes to.
const lzma2MaxChunk = 2 << 20

// decodeLZMA2Prefix is decodeLZMA2 that stops after the chunk that takes
// the output to stop bytes or more, if that is before the end; it returns
// the output length reached. dst may then be shorter than the whole data,
// but must have room for the chunk that crosses stop: stop-1 plus
// lzma2MaxChunk.
func decodeLZMA2Prefix(dst, src []byte, dictSize int64, stop int) (int, int, error) {
	d := lzma2Decoder{dictSize: dictSize}
	pos := 0       // in dst
	ip := 0        // in src
	dictStart := 0 // dst offset of the last dictionary reset
	needDictReset := true
	needProps := true
	// The chunk decoder reads up to lzmaSlack bytes past the data.
	if cap(src)-len(src) < lzmaSlack {
		buf := make([]byte, len(src), len(src)+lzmaSlack)
		copy(buf, src)
		src = buf
	}
	full := src[:len(src)+lzmaSlack]
	fail := func(at int, msg string) (int, int, error) {
		return pos, ip, &lzma2Error{in: int64(at), out: int64(pos), msg: msg}
	}
	for {
		if stop < len(dst) && pos >= stop {
			return pos, ip, nil
		}
		if ip >= len(src) {
			return fail(ip, errLZMA2Short.Error())
		}
		ctl := src[ip]
		start := ip
		if ctl == 0 {
			ip++
			if pos != len(dst) {
				return fail(start, fmt.Sprintf("end marker after %d of %d decompressed bytes", pos, len(dst)))
			}
			return pos, ip, nil
		}
		if ctl >= 0xe0 || ctl == 1 {
			needProps = true
			needDictReset = false
			dictStart = pos
		} else if needDictReset {
			return fail(start, "first chunk does not reset the dictionary")
		}
		if ctl < 0x80 {
			if ctl > 2 {
				return fail(start, fmt.Sprintf("invalid chunk control byte %#02x", ctl))
			}
			if len(src)-ip < 3 {
				return fail(start, errLZMA2Short.Error())
			}
			n := int(src[ip+1])<<8 | int(src[ip+2]) + 1
			ip += 3
			if len(src)-ip < n {
				return fail(start, errLZMA2Short.Error())
			}
			if len(dst)-pos < n {
				return fail(start, "data decodes to more bytes than the block holds")
			}
			copy(dst[pos:], src[ip:ip+n])
			pos += n
			ip += n
			continue
		}
		hl := 5
		if ctl >= 0xc0 {
			hl = 6
		}
		if len(src)-ip < hl {
			return fail(start, errLZMA2Short.Error())
		}
		usize := int(ctl&0x1f)<<16 | int(src[ip+1])<<8 | int(src[ip+2]) + 1
		csize := int(src[ip+3])<<8 | int(src[ip+4]) + 1
		switch {
		case ctl >= 0xc0:
			if !d.setProps(src[ip+5]) {
				return fail(start+5, fmt.Sprintf("invalid LZMA properties byte %#02x", src[ip+5]))
			}
			needProps = false
			d.resetState()
		case needProps:
			return fail(start, "LZMA chunk without properties after a dictionary reset")
		case ctl >= 0xa0:
			d.resetState()
		}
		ip += hl
		if len(src)-ip < csize {
			return fail(start, errLZMA2Short.Error())
		}
		if len(dst)-pos < usize {
			return fail(start, "data decodes to more bytes than the block holds")
		}
		n, err := d.chunk(dst[:pos+usize], pos, dictStart, full[ip:], csize)
		if err != "" {
			return n, ip, &lzma2Error{in: int64(ip), out: int64(n), msg: err}
		}
		pos += usize
		ip += csize
	}
}

// lzmaSlack is how many bytes one step of the decoder loop can read at
// most (a match with the longest length and distance codes takes 48 bits,
// each of which can pull in one byte). The loop checks its input position
// once per step, so the input must have this many readable bytes after its
// end; they are read, and never trusted: a chunk that reaches into them
// is an error.
const lzmaSlack = 64

// rangeDec is the range decoder of one chunk. Its bit method is small
// enough to inline into the decoder's loop.
type rangeDec struct {
	rng, code uint32
	in        []byte // the chunk and lzmaSlack bytes after it
	ip        int
}

// bit decodes one bit with probability *p and adapts it.
func (rc *rangeDec) bit(p *lzmaProb) (b uint32) {
	bound := (rc.rng >> lzmaProbBits) * *p
	if rc.code < bound {
		rc.rng = bound
		*p += (1<<lzmaProbBits - *p) >> lzmaMoveBits
	} else {
		rc.rng -= bound
		rc.code -= bound
		*p -= *p >> lzmaMoveBits
		b = 1
	}
	if rc.rng < lzmaTopValue {
		rc.rng <<= 8
		rc.code = rc.code<<8 | uint32(rc.in[rc.ip])
		rc.ip++
	}
	return b
}

// bitv is bit on values, without the normalisation (normv): the coder's
// state goes in and comes out, so that a loop that keeps it in local
// variables keeps it in registers (through the pointer of bit, the
// compiler keeps it in memory). Two functions, because one would exceed
// the compiler's inlining budget.
func bitv(rng, code uint32, p *lzmaProb) (uint32, uint32, uint32) {
	// Branch-free: literal bits are coin flips to a branch predictor. m
	// is all ones for a 0 bit (code < bound), zero for a 1.
	v := *p
	bound := (rng >> lzmaProbBits) * v
	m := uint32(int64(uint64(code)-uint64(bound)) >> 63)
	code -= bound &^ m
	rng = bound&m | (rng-bound)&^m
	// v + (2048-v)>>5 for a 0, v - v>>5 for a 1: v minus the arithmetic
	// shift of v-2017 or of v.
	*p = v - uint32(int32(v-lzmaProbAdapt&m)>>lzmaMoveBits)
	return rng, code, m + 1
}

func normv(rng, code uint32, ip int, in []byte) (uint32, uint32, int) {
	if rng < lzmaTopValue {
		rng <<= 8
		code = code<<8 | uint32(in[ip])
		ip++
	}
	return rng, code, ip
}

func (rc *rangeDec) normalize() {
	if rc.rng < lzmaTopValue {
		rc.rng <<= 8
		rc.code = rc.code<<8 | uint32(rc.in[rc.ip])
		rc.ip++
	}
}

// tree decodes an n-bit symbol, high bit first, with probs[1:1<<n].
func (rc *rangeDec) tree(probs []lzmaProb, n uint) uint32 {
	rng, code, ip, in := rc.rng, rc.code, rc.ip, rc.in
	m := uint32(1)
	for range n {
		var b uint32
		rng, code, b = bitv(rng, code, &probs[m])
		rng, code, ip = normv(rng, code, ip, in)
		m = m<<1 | b
	}
	rc.rng, rc.code, rc.ip = rng, code, ip
	return m - 1<<n
}

// reverse decodes an n-bit symbol, low bit first, with probs[1:1<<n].
func (rc *rangeDec) reverse(probs []lzmaProb, n uint) uint32 {
	rng, code, ip, in := rc.rng, rc.code, rc.ip, rc.in
	m := uint32(1)
	var sym uint32
	for i := range n {
		var b uint32
		rng, code, b = bitv(rng, code, &probs[m])
		rng, code, ip = normv(rng, code, ip, in)
		m = m<<1 | b
		sym |= b << i
	}
	rc.rng, rc.code, rc.ip = rng, code, ip
	return sym
}

func (rc *rangeDec) length(l *lzmaLenProbs, posState uint32) uint32 {
	if rc.bit(&l.choice) == 0 {
		return rc.tree(l.low[posState][:], 3)
	}
	if rc.bit(&l.choice2) == 0 {
		return lzmaLenLow + rc.tree(l.mid[posState][:], 3)
	}
	return lzmaLenLow + lzmaLenMid + rc.tree(l.high[:], 8)
}

// chunk decodes one LZMA chunk into dst[pos:] (dst ends where the chunk's
// output ends) from in, its compressed bytes. It returns the output
// position reached and an error message, empty on success.
func (d *lzma2Decoder) chunk(dst []byte, pos, dictStart int, in []byte, lim int) (int, string) {
	if lim < 5 || in[0] != 0 {
		return pos, "range coder does not start with a zero byte"
	}
	rc := rangeDec{rng: 0xffffffff, in: in[:lim+lzmaSlack], ip: 5}
	rc.code = uint32(in[1])<<24 | uint32(in[2])<<16 | uint32(in[3])<<8 | uint32(in[4])
	if rc.code == rc.rng {
		return pos, "corrupt range coder start"
	}
	p := &d.p
	lit := d.literal
	state := d.state
	rep0, rep1, rep2, rep3 := d.rep[0], d.rep[1], d.rep[2], d.rep[3]
	pbMask := uint32(1)<<d.pb - 1
	lpMask := uint32(1)<<d.lp - 1
	lc := d.lc
	end := len(dst)
	maxDist := d.dictSize
	// The coder lives in these locals (registers) through literals, the
	// commonest step, and in rc through the rest.
	rng, code, ip, in := rc.rng, rc.code, rc.ip, rc.in
	var b uint32
	for pos < end {
		if ip > lim {
			return pos, "compressed chunk ends early"
		}
		rel := uint32(pos - dictStart)
		posState := rel & pbMask
		rng, code, b = bitv(rng, code, &p.isMatch[state<<4|posState])
		rng, code, ip = normv(rng, code, ip, in)
		if b == 0 {
			prev := uint32(0)
			if pos > dictStart {
				prev = uint32(dst[pos-1])
			}
			probs := lit[lzmaLiteralProbs*((rel&lpMask)<<lc|prev>>(8-lc)):][:lzmaLiteralProbs]
			sym := uint32(1)
			if state >= 7 {
				// A literal after a match: decoded with the byte at rep0
				// as context while the two agree.
				if uint32(pos-dictStart) <= rep0 {
					return pos, "match distance beyond the dictionary"
				}
				mb := uint32(dst[pos-int(rep0)-1])
				for sym < 0x100 {
					mbit := (mb >> 7) & 1
					mb <<= 1
					rng, code, b = bitv(rng, code, &probs[(1+mbit)<<8|sym])
					rng, code, ip = normv(rng, code, ip, in)
					sym = sym<<1 | b
					if mbit != b {
						break
					}
				}
			}
			for sym < 0x100 {
				rng, code, b = bitv(rng, code, &probs[sym])
				rng, code, ip = normv(rng, code, ip, in)
				sym = sym<<1 | b
			}
			dst[pos] = byte(sym)
			pos++
			switch {
			case state < 4:
				state = 0
			case state < 10:
				state -= 3
			default:
				state -= 6
			}
			continue
		}
		rc.rng, rc.code, rc.ip = rng, code, ip
		var n uint32
		if rc.bit(&p.isRep[state]) == 0 {
			n = rc.length(&p.lenDec, posState)
			if state < 7 {
				state = 7
			} else {
				state = 10
			}
			ls := min(n, lzmaDistStates-1)
			slot := rc.tree(p.posSlot[ls][:], 6)
			dist := slot
			if slot >= 4 {
				nd := uint(slot>>1 - 1)
				dist = (2 | slot&1) << nd
				if slot < lzmaEndPosModel {
					dist += rc.reverse(p.posSpecial[dist-slot:], nd)
				} else {
					// Direct bits, then four bits through the align
					// coder.
					var v uint32
					for range nd - lzmaAlignBits {
						rc.rng >>= 1
						rc.code -= rc.rng
						t := 0 - (rc.code >> 31)
						rc.code += rc.rng & t
						if rc.code == rc.rng {
							return pos, "corrupt direct bits"
						}
						rc.normalize()
						v = v<<1 + t + 1
					}
					dist += v << lzmaAlignBits
					dist += rc.reverse(p.align[:], lzmaAlignBits)
					if dist == 0xffffffff {
						return pos, "end marker inside an LZMA2 chunk"
					}
				}
			}
			rep3, rep2, rep1, rep0 = rep2, rep1, rep0, dist
		} else {
			if pos == dictStart {
				return pos, "repeated match with an empty dictionary"
			}
			if rc.bit(&p.isRepG0[state]) == 0 {
				if rc.bit(&p.isRep0Long[state<<4|posState]) == 0 {
					// Short rep: one byte from rep0.
					if uint32(pos-dictStart) <= rep0 {
						return pos, "match distance beyond the dictionary"
					}
					dst[pos] = dst[pos-int(rep0)-1]
					pos++
					if state < 7 {
						state = 9
					} else {
						state = 11
					}
					rng, code, ip = rc.rng, rc.code, rc.ip
					continue
				}
			} else {
				var dist uint32
				if rc.bit(&p.isRepG1[state]) == 0 {
					dist = rep1
				} else {
					if rc.bit(&p.isRepG2[state]) == 0 {
						dist = rep2
					} else {
						dist = rep3
						rep3 = rep2
					}
					rep2 = rep1
				}
				rep1 = rep0
				rep0 = dist
			}
			n = rc.length(&p.repLenDec, posState)
			if state < 7 {
				state = 8
			} else {
				state = 11
			}
		}
		rng, code, ip = rc.rng, rc.code, rc.ip
		// Copy n+2 bytes from rep0+1 back.
		if int64(rep0) >= int64(pos-dictStart) || int64(rep0) >= maxDist {
			return pos, "match distance beyond the dictionary"
		}
		k := int(n) + lzmaMatchMinLen
		if k > end-pos {
			return pos, "match runs past the end of the chunk"
		}
		from := pos - int(rep0) - 1
		if k <= int(rep0)+1 {
			copy(dst[pos:pos+k], dst[from:])
		} else {
			// Overlapping: the source repeats with period rep0+1;
			// copy in doubling steps.
			out := dst[pos : pos+k]
			done := copy(out, dst[from:pos])
			for done < k {
				done += copy(out[done:], out[:done])
			}
		}
		pos += k
	}
	d.state = state
	d.rep = [4]uint32{rep0, rep1, rep2, rep3}
	if ip != lim {
		if ip > lim {
			return pos, "compressed chunk ends early"
		}
		return pos, fmt.Sprintf("chunk decoded from %d of its %d compressed bytes", ip, lim)
	}
	if code != 0 {
		return pos, "range coder does not end at zero"
	}
	return pos, ""
}
