package resultsanitizer

// A module's memory image (its active data segments) applied by the host.
//
// The pre-initialised pipeline (pipeline-warm.wasm) carries its tokenizer
// tables as about 36 MB of data segments. Given to wazero as they are,
// those bytes are copied when the module is decoded, hashed for the
// compilation cache's key and copied again into each instance's memory.
// splitData takes them out of the module (each segment left in place,
// empty, so segment indices and counts are unchanged), and the host
// writes them into a new instance's memory before anything runs in it:
// the same memory, one copy, and the cache key hashes the code only.

import (
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"
)

// segment is an active data segment: bytes at offset in memory 0.
type segment struct {
	offset uint32
	bytes  []byte
}

// splitData returns module without the bytes of its active data
// segments, and those segments; ok false (module as it is) when it has a
// start function (it would run before the segments are written), a
// segment for another memory or an offset that is not a constant. Passive
// segments (for memory.init) stay in the module.
func splitData(module []byte) (stripped []byte, segs []segment, ok bool) {
	if len(module) < 8 {
		return module, nil, false
	}
	out := make([]byte, 0, 8+len(module)/4)
	out = append(out, module[:8]...)
	r := &reader{b: module, pos: 8}
	found := false
	for r.pos < len(r.b) && r.err == nil {
		start := r.pos
		id := r.byte()
		body := r.bytes(int(r.u32()))
		switch id {
		case 8: // start
			return module, nil, false
		case 11:
			d := &reader{b: body}
			n := d.u32()
			nb := appendU32(nil, n)
			for i := uint32(0); i < n && d.err == nil; i++ {
				flag := d.u32()
				if flag == 1 { // passive (memory.init copies it): kept
					start := d.pos
					d.bytes(int(d.u32()))
					nb = append(append(nb, 0x01), d.b[start:d.pos]...)
					continue
				}
				if flag == 2 && d.u32() != 0 {
					d.fail() // another memory
				}
				if flag != 0 && flag != 2 {
					d.fail()
				}
				if d.byte() != 0x41 { // i32.const
					d.fail()
				}
				off := uint32(d.sleb32())
				if d.byte() != 0x0b {
					d.fail()
				}
				b := d.bytes(int(d.u32()))
				segs = append(segs, segment{offset: off, bytes: b})
				nb = append(nb, 0x00, 0x41)
				nb = appendSleb32(nb, int32(off))
				nb = append(nb, 0x0b, 0x00)
			}
			if d.err != nil || d.pos != len(d.b) {
				return module, nil, false
			}
			out = appendSection(out, 11, nb)
			found = true
		default:
			out = append(out, module[start:r.pos]...)
		}
	}
	if r.err != nil || !found {
		return module, nil, false
	}
	return out, segs, true
}

// sleb32 reads a signed LEB128 of 32 bits.
func (r *reader) sleb32() int32 {
	var v int64
	shift := 0
	for i := 0; i < 5; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << shift
			}
			return int32(v)
		}
	}
	r.fail()
	return 0
}

// appendSleb32 appends v as a signed LEB128 (an i32.const's immediate).
func appendSleb32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// applyData writes the segments into m's memory, in order, as
// instantiation would have.
func applyData(m api.Module, segs []segment) error {
	mem := m.Memory()
	if mem == nil && len(segs) > 0 {
		return errors.New("data segments without a memory")
	}
	for _, s := range segs {
		if !mem.Write(s.offset, s.bytes) {
			return fmt.Errorf("data segment at %d (%d bytes) out of bounds", s.offset, len(s.bytes))
		}
	}
	return nil
}
