package resultsanitizer

// The meter's walk over one function body or constant expression
// (meter.go): each instruction copied, its immediates read strictly and
// its indices moved, and the charges for bulk instructions.

// The cost of bulk instructions, in instructions: memory.fill, copy and
// init one per 8 bytes (a plain instruction takes about as long as
// setting or copying 8 bytes); table.fill, copy, init and grow one per
// element; memory.grow one per 8 bytes of the pages added (with the
// memories of memory.go, a grow does not touch them, but a Go slice that
// doubles copies).
const (
	bulkMemoryShift = 3
	bulkTableShift  = 0
	bulkGrowShift   = -(16 - bulkMemoryShift)
)

// instrs copies instructions from r to out until the end that closes the
// depth it starts at, function indices moved. With b (a function's body),
// each region (the body, a loop) is charged its instruction count at its
// start, and each bulk instruction its length (b's doc); without (a
// constant expression), nothing is added. It returns out.
func (w *rewriter) instrs(r *reader, out []byte, b *funcBody) []byte {
	depth := 0
	for r.err == nil {
		start := r.pos
		op := r.byte()
		if b != nil {
			b.regions[len(b.regions)-1].n++
		}
		shr, isBulk := 0, false
		switch {
		case op == 0x02 || op == 0x04: // block, if
			w.blockType(r)
			depth++
			if b != nil {
				b.loops = append(b.loops, false)
			}
		case op == 0x03: // loop
			w.blockType(r)
			depth++
			out = append(out, r.b[start:r.pos]...)
			if b != nil {
				b.loops = append(b.loops, true)
				out = w.charge(out, b)
			}
			continue
		case op == 0x0b: // end
			if depth == 0 {
				if b != nil {
					b.endRegion(out)
				}
				return append(out, op)
			}
			depth--
			if b != nil {
				if b.loops[len(b.loops)-1] {
					b.endRegion(out)
				}
				b.loops = b.loops[:len(b.loops)-1]
			}
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
			w.typ(r.u32())
			r.u32()
		case op == 0x1c: // select t*
			r.bytes(r.size())
		case op == 0x23 || op == 0x24: // global.get, global.set
			w.global(r.u32())
		case op >= 0x20 && op <= 0x22: // local.get, set, tee
			if i := r.u32(); b != nil && i >= b.locals {
				w.err = errMeter
			}
		case op == 0x25 || op == 0x26: // table.get/set
			r.u32()
		case op >= 0x28 && op <= 0x3e: // loads, stores
			w.memarg(r)
		case op == 0x3f: // memory.size
			r.u32()
		case op == 0x40: // memory.grow
			r.u32()
			shr, isBulk = bulkGrowShift, true
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
			shr, isBulk = w.prefixFC(r)
		case op == 0xfd:
			w.prefixFD(r)
		default: // exceptions, atomics, GC: not metered
			r.fail()
		}
		if isBulk && b != nil {
			out = w.bulk(out, b, shr)
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

// prefixFC reads a 0xfc instruction; a bulk one (its length on top of
// the stack) returns its cost's shift (instrs).
func (w *rewriter) prefixFC(r *reader) (shr int, bulk bool) {
	switch sub := r.u32(); {
	case sub <= 7: // saturating truncations
	case sub == 8 || sub == 10: // memory.init, memory.copy
		r.u32()
		r.u32()
		return bulkMemoryShift, true
	case sub == 12 || sub == 14: // table.init, table.copy
		r.u32()
		r.u32()
		return bulkTableShift, true
	case sub == 11: // memory.fill
		r.u32()
		return bulkMemoryShift, true
	case sub == 15 || sub == 17: // table.grow, table.fill
		r.u32()
		return bulkTableShift, true
	case sub == 9 || sub == 13 || sub == 16: // data.drop, elem.drop, table.size
		r.u32()
	default:
		r.fail()
	}
	return 0, false
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

// limits skips a table's or memory's limits: a 32-bit one, not shared
// (the rewrite's bulk charges take an i32 length).
func limits(r *reader) {
	flag := r.byte()
	if flag > 1 {
		r.fail()
	}
	r.leb(10)
	if flag&1 != 0 {
		r.leb(10)
	}
}

// valType reads a value type of one byte (numbers, v128, funcref,
// externref) and returns it; anything else fails r.
func valType(r *reader) byte {
	t := r.byte()
	switch t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
	default:
		r.fail()
	}
	return t
}
