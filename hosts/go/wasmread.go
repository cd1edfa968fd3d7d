package resultsanitizer

// The wasm binary reading and writing the meter (meter.go) needs: a
// strict LEB128 reader that fails instead of guessing, and the encoders.

import "encoding/binary"

// reader walks a wasm binary. Its first failure (past the end, an
// over-long LEB128) sets err and moves to the end, so every later read
// fails too and returns zero: callers check err once, after a section.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errMeter
	}
	r.pos = len(r.b)
}

func (r *reader) byte() byte {
	if r.pos >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// leb skips or reads an unsigned LEB128 of at most maxBytes bytes.
func (r *reader) leb(maxBytes int) uint64 {
	var v uint64
	for i := 0; i < maxBytes; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if i < 10 {
			v |= uint64(c&0x7f) << (7 * i)
		}
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail()
	return 0
}

// u32 reads an unsigned LEB128 of 32 bits, strictly: at most 5 bytes,
// and none of the last byte's bits past the 32nd (an over-long or
// over-large encoding fails rather than being cut to 32 bits, which would
// turn an invalid module into a valid one).
func (r *reader) u32() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if i == 4 && c&0xf0 != 0 {
			break
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail()
	return 0
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b)-r.pos { // not r.pos+n: it can overflow an int of 32 bits
		r.fail()
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

func (r *reader) name() []byte { return r.bytes(r.size()) }

// size reads a u32 length as an int (-1, which bytes refuses, when it
// does not fit one: a 32-bit platform).
func (r *reader) size() int {
	n := r.u32()
	if uint64(n) > uint64(^uint(0)>>1) {
		return -1
	}
	return int(n)
}

func appendU32(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }

func appendName(b []byte, s string) []byte { return append(appendU32(b, uint32(len(s))), s...) }

func appendSection(out []byte, id byte, body []byte) []byte {
	return append(appendU32(append(out, id), uint32(len(body))), body...)
}
