package resultsanitizer

// CPU bound of a guest: fuel, counted by the guest itself.
//
// wazero's own way to stop a guest at a deadline
// (RuntimeConfig.WithCloseOnContextDone) leaves the compiled code at every
// loop header and function entry to check, in Go, whether the module was
// closed: a round trip between the guest's stack and Go at each iteration
// of every loop, which made the pipeline's calls about six times slower
// (a 256 KiB log: 11 ms without the checks, 67 ms with them).
//
// Here the module is rewritten before it is compiled (meter) so that the
// same places (each function's entry, each loop's header) count down a
// global of its own; only when the count reaches zero does the guest call
// the host (an import added for this), which stops it when the call's
// context is done (its deadline: Config.Timeout) and otherwise gives it
// the next fuelSlice. So a guest that loops is stopped by the deadline as
// before, one slice (a few milliseconds of work) after it passes at the
// latest, and calls Go every slice (where the Go scheduler and collector
// get the thread back), at a cost of a few instructions per iteration.
//
// A module the rewriter cannot read (an instruction it does not know) is
// left as it is and runs under wazero's own checks
// (WithCloseOnContextDone): slower, the same guarantee.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

const (
	// fuelModule and fuelRefill name the import the rewritten module calls
	// when its fuel runs out; fuelGlobal is the export of the counter.
	fuelModule = "result-sanitizer:host/fuel"
	fuelRefill = "refill"
	fuelGlobal = "result-sanitizer:host/fuel"
	// fuelSlice is how many function entries and loop iterations a guest
	// runs between two checks of its deadline.
	fuelSlice = 1 << 20
)

var errMeter = errors.New("meter: unsupported module")

// defineFuel instantiates, in rt, the host module the metered modules
// import: refill checks the deadline of the call in progress (its
// context) and gives the next slice.
func defineFuel(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder(fuelModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, _ []uint64) {
			if err := ctx.Err(); err != nil {
				panic(err)
			}
			g, ok := m.ExportedGlobal(fuelGlobal).(api.MutableGlobal)
			if !ok {
				panic(errors.New("meter: no fuel global"))
			}
			g.Set(fuelSlice)
		}), nil, nil).Export(fuelRefill).Instantiate(ctx)
	return err
}

// wasm binary reading.

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

func (r *reader) u32() uint32 { return uint32(r.leb(5)) }

func (r *reader) bytes(n int) []byte {
	if n < 0 || r.pos+n > len(r.b) {
		r.fail()
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

func (r *reader) name() []byte { return r.bytes(int(r.u32())) }

func appendU32(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }

func appendName(b []byte, s string) []byte { return append(appendU32(b, uint32(len(s))), s...) }

func appendSection(out []byte, id byte, body []byte) []byte {
	return append(appendU32(append(out, id), uint32(len(body))), body...)
}

// rewriter holds what the rewrite needs: function indices at or past
// imported move up by one (the added import comes last among the
// imported functions).
type rewriter struct {
	imported uint32 // imported functions, before the added one
	refill   uint32 // the added import's index (== imported)
	fuel     uint32 // the added global's index
}

func (w *rewriter) fn(i uint32) uint32 {
	if i >= w.imported {
		return i + 1
	}
	return i
}

// prologue is the check the guest runs at each function entry and loop
// header: if the fuel is 0, refill; then take one.
func (w *rewriter) prologue(out []byte) []byte {
	out = appendU32(append(out, 0x23), w.fuel) // global.get fuel
	out = append(out, 0x50, 0x04, 0x40, 0x10)  // i64.eqz, if, call
	out = appendU32(out, w.refill)             // refill
	out = append(out, 0x0b, 0x23)              // end, global.get
	out = appendU32(out, w.fuel)               // fuel
	out = append(out, 0x42, 0x01, 0x7d, 0x24)  // i64.const 1, i64.sub, global.set
	return appendU32(out, w.fuel)              // fuel
}

// instrs copies instructions from r to out until the end that closes the
// depth it starts at (an expression's), function indices moved, the
// prologue after each loop header. It returns out.
func (w *rewriter) instrs(r *reader, out []byte) []byte {
	depth := 0
	for r.err == nil {
		start := r.pos
		op := r.byte()
		switch {
		case op == 0x02 || op == 0x04: // block, if
			r.leb(5) // block type (s33)
			depth++
		case op == 0x03: // loop
			r.leb(5)
			depth++
			out = append(out, r.b[start:r.pos]...)
			out = w.prologue(out)
			continue
		case op == 0x0b: // end
			if depth == 0 {
				return append(out, op)
			}
			depth--
		case op == 0x10 || op == 0x12 || op == 0xd2: // call, return_call, ref.func
			i := r.u32()
			out = appendU32(append(out, op), w.fn(i))
			continue
		case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1:
		case op >= 0x45 && op <= 0xc4: // numeric
		case op == 0x0c || op == 0x0d: // br, br_if
			r.u32()
		case op == 0x0e: // br_table
			n := r.u32()
			for i := uint32(0); i <= n && r.err == nil; i++ {
				r.u32()
			}
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			r.u32()
			r.u32()
		case op == 0x1c: // select t*
			r.bytes(int(r.u32()))
		case op >= 0x20 && op <= 0x26: // locals, globals, table.get/set
			r.u32()
		case op >= 0x28 && op <= 0x3e: // loads, stores
			w.memarg(r)
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.u32()
		case op == 0x41: // i32.const
			r.leb(5)
		case op == 0x42: // i64.const
			r.leb(10)
		case op == 0x43:
			r.bytes(4)
		case op == 0x44:
			r.bytes(8)
		case op == 0xd0: // ref.null
			r.leb(5)
		case op == 0xfc:
			w.prefixFC(r)
		case op == 0xfd:
			w.prefixFD(r)
		default: // exceptions, atomics, GC: not metered
			r.fail()
		}
		out = append(out, r.b[start:r.pos]...)
	}
	return out
}

func (w *rewriter) memarg(r *reader) {
	if a := r.u32(); a&0x40 != 0 { // multi-memory: a memory index follows
		r.u32()
	}
	r.leb(10)
}

func (w *rewriter) prefixFC(r *reader) {
	switch sub := r.u32(); {
	case sub <= 7: // saturating truncations
	case sub == 8 || sub == 10 || sub == 12 || sub == 14: // memory.init, memory.copy, table.init, table.copy
		r.u32()
		r.u32()
	case sub == 9 || sub == 11 || sub == 13 || (sub >= 15 && sub <= 17): // data.drop, memory.fill, elem.drop, table.grow/size/fill
		r.u32()
	default:
		r.fail()
	}
}

func (w *rewriter) prefixFD(r *reader) {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // v128 loads, store, load_zero
		w.memarg(r)
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.bytes(16)
	case sub >= 21 && sub <= 34: // extract, replace lane
		r.byte()
	case sub >= 84 && sub <= 91: // load, store lane
		w.memarg(r)
		r.byte()
	case sub <= 0x113: // the rest: no immediate
	default:
		r.fail()
	}
}

// limits skips a table's or memory's limits.
func limits(r *reader) {
	flag := r.byte()
	r.leb(10)
	if flag&1 != 0 {
		r.leb(10)
	}
}

// meter returns module (a core module's bytes) rewritten to count fuel
// (see the top of this file), or errMeter when it uses what the rewriter
// does not read.
func meter(module []byte) ([]byte, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" || binary.LittleEndian.Uint32(module[4:8]) != 1 {
		return nil, errMeter
	}
	type section struct {
		id   byte
		body []byte
	}
	var sections []section
	r := &reader{b: module, pos: 8}
	for r.pos < len(r.b) && r.err == nil {
		id := r.byte()
		body := r.bytes(int(r.u32()))
		sections = append(sections, section{id, body})
	}
	if r.err != nil {
		return nil, r.err
	}
	has := map[byte]bool{}
	for _, s := range sections {
		if s.id != 0 {
			has[s.id] = true
		}
	}
	w := &rewriter{}
	var importedGlobals, types, globals uint32
	// First pass: counts.
	for _, s := range sections {
		r := &reader{b: s.body}
		switch s.id {
		case 1:
			types = r.u32()
		case 2:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				if string(r.name()) == fuelModule {
					r.fail() // ours only
				}
				r.name()
				switch kind := r.byte(); kind {
				case 0:
					r.u32()
					w.imported++
				case 1:
					r.byte()
					limits(r)
				case 2:
					limits(r)
				case 3:
					r.byte()
					r.byte()
					importedGlobals++
				default:
					r.fail()
				}
			}
		case 6:
			globals = r.u32()
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if !has[1] || !has[7] || !has[10] {
		return nil, errMeter
	}
	w.refill = w.imported
	w.fuel = importedGlobals + globals
	out := append(make([]byte, 0, len(module)+len(module)/16+64), module[:8]...)
	// Sections in order; the import and global sections are made when
	// missing, at their places.
	order := map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
	emitMissing := func(before byte) {
		if !has[2] && order[before] > order[2] {
			has[2] = true
			body := appendU32(nil, 1)
			body = appendName(appendName(body, fuelModule), fuelRefill)
			body = appendU32(append(body, 0x00), types)
			out = appendSection(out, 2, body)
		}
		if !has[6] && order[before] > order[6] {
			has[6] = true
			out = appendSection(out, 6, []byte{0x01, 0x7e, 0x01, 0x42, 0x00, 0x0b})
		}
	}
	for _, s := range sections {
		if s.id != 0 {
			emitMissing(s.id)
		}
		r := &reader{b: s.body}
		var body []byte
		switch s.id {
		case 1: // types: add () -> ()
			n := r.u32()
			body = append(appendU32(nil, n+1), r.b[r.pos:]...)
			body = append(body, 0x60, 0x00, 0x00)
		case 2: // imports: add the refill function, last
			n := r.u32()
			body = append(appendU32(nil, n+1), r.b[r.pos:]...)
			body = appendName(appendName(body, fuelModule), fuelRefill)
			body = appendU32(append(body, 0x00), types)
		case 6: // globals: init expressions moved, the fuel added
			n := r.u32()
			body = appendU32(nil, n+1)
			for i := uint32(0); i < n && r.err == nil; i++ {
				t := r.byte()
				body = append(body, t, r.byte())
				if t != 0x7f && t != 0x7e && t != 0x7d && t != 0x7c && t != 0x7b && t != 0x70 && t != 0x6f {
					r.fail()
				}
				body = w.instrs(r, body)
			}
			body = append(body, 0x7e, 0x01, 0x42, 0x00, 0x0b)
		case 7: // exports: function indices moved, the fuel exported
			n := r.u32()
			body = appendU32(nil, n+1)
			for i := uint32(0); i < n && r.err == nil; i++ {
				name := r.name()
				if string(name) == fuelGlobal {
					r.fail()
				}
				kind := r.byte()
				idx := r.u32()
				if kind == 0 {
					idx = w.fn(idx)
				}
				body = appendU32(append(appendName(body, string(name)), kind), idx)
			}
			body = appendU32(append(appendName(body, fuelGlobal), 0x03), w.fuel)
		case 8: // start
			body = appendU32(nil, w.fn(r.u32()))
		case 9: // elements
			n := r.u32()
			body = appendU32(nil, n)
			for i := uint32(0); i < n && r.err == nil; i++ {
				flag := r.u32()
				body = appendU32(body, flag)
				if flag > 7 {
					r.fail()
					break
				}
				if flag&3 == 2 { // a table index
					body = appendU32(body, r.u32())
				}
				if flag&1 == 0 { // active: an offset
					body = w.instrs(r, body)
				}
				if flag&3 != 0 { // elemkind or reftype
					body = append(body, r.byte())
				}
				m := r.u32()
				body = appendU32(body, m)
				for j := uint32(0); j < m && r.err == nil; j++ {
					if flag&4 == 0 {
						body = appendU32(body, w.fn(r.u32()))
					} else {
						body = w.instrs(r, body)
					}
				}
			}
		case 10: // code
			n := r.u32()
			body = appendU32(nil, n)
			var fb []byte
			for i := uint32(0); i < n && r.err == nil; i++ {
				size := r.u32()
				fr := &reader{b: r.bytes(int(size))}
				fb = fb[:0]
				locals := fr.u32()
				for j := uint32(0); j < locals && fr.err == nil; j++ {
					fr.u32()
					fr.byte()
				}
				fb = append(fb, fr.b[:fr.pos]...)
				fb = w.prologue(fb)
				fb = w.instrs(fr, fb)
				if fr.err == nil && fr.pos != len(fr.b) {
					fr.fail()
				}
				if fr.err != nil {
					r.err = fr.err
					break
				}
				body = append(appendU32(body, uint32(len(fb))), fb...)
			}
		case 0:
			name := r.name()
			if string(name) == "name" {
				body = w.names(r, appendName(nil, "name"))
			} else {
				body = s.body
			}
		default:
			body = s.body
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w (section %d)", r.err, s.id)
		}
		out = appendSection(out, s.id, body)
	}
	order[0xff] = 99
	emitMissing(0xff)
	return out, nil
}

// names rewrites the name section: function indices moved in the
// function (1), local (2) and label (3) names; a part it cannot read is
// dropped (names only label stack traces).
func (w *rewriter) names(r *reader, out []byte) []byte {
	for r.pos < len(r.b) && r.err == nil {
		id := r.byte()
		sub := &reader{b: r.bytes(int(r.u32()))}
		if r.err != nil {
			break
		}
		var body []byte
		switch id {
		case 1:
			n := sub.u32()
			body = appendU32(nil, n)
			for i := uint32(0); i < n && sub.err == nil; i++ {
				body = appendU32(body, w.fn(sub.u32()))
				body = appendName(body, string(sub.name()))
			}
		case 2, 3:
			n := sub.u32()
			body = appendU32(nil, n)
			for i := uint32(0); i < n && sub.err == nil; i++ {
				body = appendU32(body, w.fn(sub.u32()))
				start := sub.pos
				m := sub.u32()
				for j := uint32(0); j < m && sub.err == nil; j++ {
					sub.u32()
					sub.name()
				}
				body = append(body, sub.b[start:sub.pos]...)
			}
		default:
			body = sub.b
		}
		if sub.err == nil {
			out = appendSection(out, id, body)
		}
	}
	return out
}

// metered is the modules of one runtime, rewritten by meter when all of
// them can be (ok), else as they are (the runtime then closes a module
// when its call's context is done: wazero's own checks).
func metered(modules ...[]byte) (out [][]byte, ok bool) {
	for _, m := range modules {
		if m == nil {
			out = append(out, nil)
			continue
		}
		b, err := meter(m)
		if err != nil {
			return modules, false
		}
		out = append(out, b)
	}
	return out, true
}

// importsAny says whether compiled imports anything but, when metered,
// the refill function meter added.
func importsAny(compiled wazero.CompiledModule, metered bool) bool {
	for _, f := range compiled.ImportedFunctions() {
		if m, n, _ := f.Import(); !metered || m != fuelModule || n != fuelRefill {
			return true
		}
	}
	return len(compiled.ImportedMemories()) > 0
}
