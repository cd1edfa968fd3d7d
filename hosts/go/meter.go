package resultsanitizer

// CPU bound of our own modules (the pipeline, the verifier): fuel,
// counted by the guest itself.
//
// wazero's own way to stop a guest at a deadline
// (RuntimeConfig.WithCloseOnContextDone) leaves the compiled code at every
// loop header and function entry to check, in Go, whether the module was
// closed: a round trip between the guest's stack and Go at each iteration
// of every loop, which made the pipeline's calls about six times slower
// (a 256 KiB log: 11 ms without the checks, 67 ms with them).
//
// Here our modules are rewritten before they are compiled (meter) so that
// the guest counts its work down in a global of its own: each function's
// entry takes the number of instructions of its body outside loops, each
// loop's header the number of instructions of the loop's body outside
// inner loops (each is an upper bound of what runs before the next
// charge: without a loop, code only goes forward), and each bulk
// instruction (memory.fill, copy, init, grow; table.fill, copy, init,
// grow) its length operand (one per 8 bytes, or per element). When the
// count drops below zero the guest calls the host (an import added for
// this), which stops it when the call's context is done (its deadline:
// Config.Timeout) and otherwise gives it the next fuelSlice. Between two
// checks a guest runs at most fuelSlice instructions plus one charge (a
// region's instruction count, or one bulk instruction: at most its
// memory's cap), about a millisecond (TestAMeteredGuestCallsTheHostEveryMillisecond);
// compiled guest code cannot be preempted by the Go runtime, so that is
// also the longest a garbage collection's stop waits for it.
//
// A rule pack is never rewritten: packs are not ours (a tenant's may be
// hostile), and run as they are under wazero's own checks. Our modules
// are not trusted to be valid either: the rewrite checks every index it
// moves or that could name what it adds (the fuel global, the refill
// function, its type, the added local) and reads LEB128 strictly, so it
// cannot turn an invalid module into a valid one; a module it cannot read
// (an instruction it does not know, memory64, GC types) or that fails
// these checks is left as it is and runs under wazero's own checks
// (WithCloseOnContextDone): slower, the same guarantee.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

const (
	// fuelModule and fuelRefill name the import the rewritten module calls
	// when its fuel runs out; fuelGlobal is the export of the counter.
	fuelModule = "result-sanitizer:host/fuel"
	fuelRefill = "refill"
	fuelGlobal = "result-sanitizer:host/fuel"
	// fuelSlice is how many instructions (bulk instructions counted by
	// their length) a guest runs between two checks of its deadline: 0.2
	// to 1.7 ms here (TestAMeteredGuestCallsTheHostEveryMillisecond).
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
			refills.Add(1)
		}), nil, nil).Export(fuelRefill).Instantiate(ctx)
	return err
}

// refills counts the refills of this process (the tests check metering
// ran).
var refills atomic.Int64

// rewriter holds what the rewrite needs: function indices at or past
// imported move up by one (the added import comes last among the
// imported functions).
//
// The original module is not trusted to be valid: every index the rewrite
// moves, or that could name what it adds (the fuel global, the refill
// function's type), is checked against the original module's counts, so
// an index out of range there fails the rewrite (errMeter) instead of
// naming the fuel counter or the refill type afterwards.
type rewriter struct {
	imported uint32 // imported functions, before the added one
	funcs    uint32 // all the original functions (imported + defined)
	types    uint32 // the original types; the added one is types
	refill   uint32 // the added import's index (== imported)
	fuel     uint32 // the added global's index (== the original globals)
	err      error  // an index out of range
}

func (w *rewriter) fn(i uint32) uint32 {
	if i >= w.funcs {
		w.err = errMeter
	}
	if i >= w.imported {
		return i + 1
	}
	return i
}

// global checks a global index of the original module.
func (w *rewriter) global(i uint32) {
	if i >= w.fuel {
		w.err = errMeter
	}
}

// typ checks a type index of the original module.
func (w *rewriter) typ(i uint32) {
	if i >= w.types {
		w.err = errMeter
	}
}

// blockType reads a block type: the empty type or a value type (one byte,
// negative as an s33), or a type index (non-negative, checked).
func (w *rewriter) blockType(r *reader) {
	if r.pos < len(r.b) && r.b[r.pos]&0xc0 == 0x40 { // one byte, negative
		r.pos++
		return
	}
	var v uint64
	for i := 0; i < 5; i++ {
		c := r.byte()
		if r.err != nil {
			return
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 { // a negative index, or an over-long value type
				r.fail()
				return
			}
			if v >= uint64(w.types) {
				w.err = errMeter
			}
			return
		}
	}
	r.fail()
}

// funcBody is what the rewrite of one function's code needs: its locals (the
// original ones, parameters included: an index past them is refused, as
// it would name the added local), the added i32 local (a bulk
// instruction's length is kept there while it is charged), and the open
// metered regions (the function's body, then each loop inside), each
// with the count of its instructions so far and where its charge's
// immediate is, to be written when the region ends.
type funcBody struct {
	locals  uint32
	scratch uint32
	regions []meterRegion
	loops   []bool // per open block, if or loop: a loop
}

type meterRegion struct {
	at int   // offset in out of the charge's 5-byte immediate
	n  int64 // instructions so far
}

// charge appends the check a region starts with (each function's entry,
// each loop's header): take the region's cost (its immediate, written when
// the region ends: chargeWidth bytes), and when the fuel is below 0, call
// refill.
func (w *rewriter) charge(out []byte, b *funcBody) []byte {
	out = appendU32(append(out, 0x23), w.fuel) // global.get fuel
	out = append(out, 0x42)                    // i64.const cost
	b.regions = append(b.regions, meterRegion{at: len(out)})
	out = append(out, make([]byte, chargeWidth)...)
	out = append(out, 0x7d, 0x24) // i64.sub, global.set
	out = appendU32(out, w.fuel)  // fuel
	return w.check(out)
}

// check appends: if fuel < 0, call refill.
func (w *rewriter) check(out []byte) []byte {
	out = appendU32(append(out, 0x23), w.fuel)            // global.get fuel
	out = append(out, 0x42, 0x00, 0x53, 0x04, 0x40, 0x10) // i64.const 0, i64.lt_s, if, call
	return append(appendU32(out, w.refill), 0x0b)         // refill, end
}

// chargeWidth: a region's cost is written as a signed LEB128 padded to 5
// bytes (up to 2^34 - 1).
const chargeWidth = 5

// endRegion writes the innermost region's cost into its charge.
func (b *funcBody) endRegion(out []byte) {
	g := b.regions[len(b.regions)-1]
	b.regions = b.regions[:len(b.regions)-1]
	n := min(max(g.n, 1), 1<<34-1)
	for i := 0; i < chargeWidth; i++ {
		c := byte(n>>(7*i)) & 0x7f
		if i < chargeWidth-1 {
			c |= 0x80
		}
		out[g.at+i] = c
	}
}

// bulk appends, before a bulk instruction whose length (an i32) is on top
// of the stack, a charge of that length shifted right by shr bits (left by
// -shr): the length kept in the added local, the fuel taken, refill
// called when below 0, the length put back.
func (w *rewriter) bulk(out []byte, b *funcBody, shr int) []byte {
	out = appendU32(append(out, 0x21), b.scratch) // local.set scratch
	out = appendU32(append(out, 0x23), w.fuel)    // global.get fuel
	out = appendU32(append(out, 0x20), b.scratch) // local.get scratch
	out = append(out, 0xad)                       // i64.extend_i32_u
	switch {
	case shr > 0:
		out = append(out, 0x42, byte(shr), 0x88) // i64.const shr, i64.shr_u
	case shr < 0:
		out = append(out, 0x42, byte(-shr), 0x86) // i64.const -shr, i64.shl
	}
	out = append(out, 0x7d, 0x24) // i64.sub, global.set
	out = appendU32(out, w.fuel)
	out = w.check(out)
	return appendU32(append(out, 0x20), b.scratch) // local.get scratch
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
		body := r.bytes(r.size())
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
	var importedGlobals, types, globals, defined uint32
	var funcTypes []uint32 // the type indices of imported, then defined functions
	var params []uint32    // per type, its parameter count
	// First pass: counts.
	for _, s := range sections {
		r := &reader{b: s.body}
		switch s.id {
		case 1:
			types = r.u32()
			for i := uint32(0); i < types && r.err == nil; i++ {
				if r.byte() != 0x60 { // a function type (not GC's)
					r.fail()
				}
				np := r.u32()
				for j := uint32(0); j < np && r.err == nil; j++ {
					valType(r)
				}
				params = append(params, np)
				nr := r.u32()
				for j := uint32(0); j < nr && r.err == nil; j++ {
					valType(r)
				}
			}
		case 4: // tables: 32-bit only
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				r.byte()
				limits(r)
			}
		case 5: // memories: 32-bit, not shared
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				limits(r)
			}
		case 2:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				if string(r.name()) == fuelModule {
					r.fail() // ours only
				}
				r.name()
				switch kind := r.byte(); kind {
				case 0:
					funcTypes = append(funcTypes, r.u32())
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
		case 3:
			n := r.u32()
			for i := uint32(0); i < n && r.err == nil; i++ {
				funcTypes = append(funcTypes, r.u32())
			}
			defined = n
		case 6:
			globals = r.u32()
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	w.types, w.funcs = types, w.imported+defined
	if w.funcs < w.imported {
		return nil, errMeter
	}
	for _, t := range funcTypes { // the type of every function
		w.typ(t)
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
				body = w.instrs(r, body, nil)
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
				if kind == 3 {
					w.global(idx)
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
					body = w.instrs(r, body, nil)
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
						body = w.instrs(r, body, nil)
					}
				}
			}
		case 10: // code
			n := r.u32()
			body = appendU32(nil, n)
			var fb []byte
			for i := uint32(0); i < n && r.err == nil; i++ {
				fr := &reader{b: r.bytes(r.size())}
				if uint64(w.imported)+uint64(i) >= uint64(len(funcTypes)) {
					fr.fail()
				}
				var locals uint64 // the parameters, then the declared locals
				if fr.err == nil {
					locals = uint64(params[funcTypes[w.imported+i]])
				}
				groups := fr.u32()
				if groups >= 1<<31 {
					fr.fail()
				}
				fb = appendU32(fb[:0], groups+1)
				for j := uint32(0); j < groups && fr.err == nil; j++ {
					c := fr.u32()
					locals += uint64(c)
					fb = append(appendU32(fb, c), valType(fr))
				}
				if locals >= 1<<31 {
					fr.fail()
				}
				fb = append(fb, 0x01, 0x7f) // the added local: an i32
				b := &funcBody{locals: uint32(locals), scratch: uint32(locals)}
				fb = w.charge(fb, b)
				fb = w.instrs(fr, fb, b)
				if fr.err == nil && fr.pos != len(fr.b) {
					fr.fail()
				}
				if fr.err != nil {
					r.err = fr.err
					break
				}
				body = append(appendU32(body, uint32(len(fb))), fb...)
			}
		case 11: // data: the offsets' global indices checked, copied as they are
			n := r.u32()
			var scratch []byte
			for i := uint32(0); i < n && r.err == nil; i++ {
				switch flag := r.u32(); flag {
				case 0, 2:
					if flag == 2 {
						r.u32()
					}
					scratch = w.instrs(r, scratch[:0], nil)
				case 1:
				default:
					r.fail()
				}
				r.bytes(r.size())
			}
			if r.err == nil && r.pos != len(r.b) {
				r.fail()
			}
			body = s.body
		case 0:
			name := r.name()
			if string(name) == "name" {
				saved := w.err // names only label traces: one out of range is dropped, not checked
				body = w.names(r, appendName(nil, "name"))
				w.err = saved
			} else {
				body = s.body
			}
		default:
			body = s.body
		}
		if r.err == nil && s.id >= 6 && s.id <= 11 && r.pos != len(r.b) {
			r.fail() // trailing bytes in a section this rewrite re-encodes
		}
		if r.err == nil && s.id != 0 {
			r.err = w.err
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
		sub := &reader{b: r.bytes(r.size())}
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

// metered is module (one of ours: the pipeline or the verifier, never a
// pack) rewritten by meter (ok), else as it is (its runtime then closes it
// when its call's context is done: wazero's own checks). A panic in the
// rewriter (a bug) also leaves the module as it is.
func metered(module []byte) (out []byte, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = module, false
		}
	}()
	b, err := meter(module)
	if err != nil {
		return module, false
	}
	return b, true
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
