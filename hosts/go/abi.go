package resultsanitizer

// A small, generic canonical-ABI layer: type descriptors with their
// wasm32 layout (size, alignment, field offsets), and a deep copy of a
// value from one linear memory to another that reallocates every string
// and list in the destination. That is all a host needs to link two core
// modules across an interface whose values are records, lists, strings,
// options, enums and scalars: it never decodes values into Go.
//
// Every read is bounds-checked against the source memory and every
// allocation goes through the destination's cabi_realloc, so a hostile
// source cannot make the host itself allocate: aliasing tricks (one big
// string named a million times) run into the destination's memory cap.

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// Kind of a WIT type.
type Kind int

// Kinds that this layer supports.
const (
	Bool Kind = iota
	U8
	U32
	U64
	F32
	String
	List
	Record
	Option
	Enum
)

// Field of a record.
type Field struct {
	Name string
	Type *Type
}

// Type describes a WIT type.
type Type struct {
	Kind   Kind
	Name   string  // named types (records, enums)
	Elem   *Type   // list and option payload
	Fields []Field // records
	Cases  []string
	// Blank: a string copied as empty, its bytes neither read nor
	// allocated in the destination (a field the destination never reads).
	Blank bool
}

func alignTo(n, a uint32) uint32 { return (n + a - 1) / a * a }

// SizeAlign is the canonical ABI's size and alignment on wasm32.
func (t *Type) SizeAlign() (size, align uint32) {
	switch t.Kind {
	case Bool, U8:
		return 1, 1
	case U32, F32:
		return 4, 4
	case U64:
		return 8, 8
	case String, List:
		return 8, 4
	case Enum:
		if len(t.Cases) <= 256 {
			return 1, 1
		}
		return 2, 2
	case Option:
		ps, pa := t.Elem.SizeAlign()
		a := max(pa, 1)
		return alignTo(alignTo(1, pa)+ps, a), a
	case Record:
		var off, al uint32 = 0, 1
		for _, f := range t.Fields {
			s, a := f.Type.SizeAlign()
			off = alignTo(off, a) + s
			al = max(al, a)
		}
		return alignTo(off, al), al
	}
	panic("unknown kind")
}

// Offsets of a record's fields.
func (t *Type) Offsets() []uint32 {
	out := make([]uint32, len(t.Fields))
	var off uint32
	for i, f := range t.Fields {
		s, a := f.Type.SizeAlign()
		off = alignTo(off, a)
		out[i] = off
		off += s
	}
	return out
}

// String is the WIT spelling (named types by name).
func (t *Type) String() string {
	if t.Name != "" {
		return t.Name
	}
	switch t.Kind {
	case Bool:
		return "bool"
	case U8:
		return "u8"
	case U32:
		return "u32"
	case U64:
		return "u64"
	case F32:
		return "f32"
	case String:
		return "string"
	case List:
		return "list<" + t.Elem.String() + ">"
	case Option:
		return "option<" + t.Elem.String() + ">"
	}
	return "?"
}

// flat reports whether values of t hold no pointers (copied as bytes).
func (t *Type) flat() bool {
	switch t.Kind {
	case String, List:
		return false
	case Option:
		return t.Elem.flat()
	case Record:
		for _, f := range t.Fields {
			if !f.Type.flat() {
				return false
			}
		}
	}
	return true
}

// Side is one linear memory and its allocator.
type Side struct {
	Mem   api.Memory
	Alloc func(align, size uint32) (uint32, error)
}

func (s Side) read(off, n uint32) ([]byte, error) {
	b, ok := s.Mem.Read(off, n)
	if !ok {
		return nil, fmt.Errorf("read of %d bytes at %d is out of bounds", n, off)
	}
	return b, nil
}

func (s Side) write(off uint32, b []byte) error {
	if !s.Mem.Write(off, b) {
		return fmt.Errorf("write of %d bytes at %d is out of bounds", len(b), off)
	}
	return nil
}

// maxCopy bounds one string or list, bytes (the memories bound the rest).
const maxCopy = 1 << 30

// Copy copies the value of type t at src:sp to dst:dp, reallocating its
// strings and lists in dst.
func Copy(t *Type, src Side, sp uint32, dst Side, dp uint32) error {
	switch t.Kind {
	case String, List:
		if t.Blank {
			out := make([]byte, 8)
			binary.LittleEndian.PutUint32(out, 1) // a dangling, aligned pointer, as for an empty list
			return dst.write(dp, out)
		}
		hdr, err := src.read(sp, 8)
		if err != nil {
			return err
		}
		ptr, n := binary.LittleEndian.Uint32(hdr), binary.LittleEndian.Uint32(hdr[4:])
		es, ea := uint32(1), uint32(1)
		if t.Kind == List {
			es, ea = t.Elem.SizeAlign()
		}
		total := uint64(n) * uint64(es)
		if total > maxCopy {
			return fmt.Errorf("%s of %d bytes is over the copy limit", t, total)
		}
		var np uint32
		if total > 0 {
			if _, err := src.read(ptr, uint32(total)); err != nil {
				return err
			}
			if np, err = dst.Alloc(ea, uint32(total)); err != nil {
				return err
			}
			if t.Kind == String || t.Elem.flat() {
				b, _ := src.read(ptr, uint32(total))
				if err := dst.write(np, b); err != nil {
					return err
				}
			} else {
				for i := uint32(0); i < n; i++ {
					if err := Copy(t.Elem, src, ptr+i*es, dst, np+i*es); err != nil {
						return err
					}
				}
			}
		} else {
			np = ea // a dangling, aligned pointer for an empty list
		}
		out := make([]byte, 8)
		binary.LittleEndian.PutUint32(out, np)
		binary.LittleEndian.PutUint32(out[4:], n)
		return dst.write(dp, out)
	case Record:
		for i, off := range t.Offsets() {
			if err := Copy(t.Fields[i].Type, src, sp+off, dst, dp+off); err != nil {
				return fmt.Errorf("%s.%s: %w", t, t.Fields[i].Name, err)
			}
		}
		return nil
	case Option:
		d, err := src.read(sp, 1)
		if err != nil {
			return err
		}
		switch d[0] {
		case 0:
			size, _ := t.SizeAlign()
			return dst.write(dp, make([]byte, size))
		case 1:
			_, pa := t.Elem.SizeAlign()
			if err := dst.write(dp, []byte{1}); err != nil {
				return err
			}
			off := alignTo(1, pa)
			return Copy(t.Elem, src, sp+off, dst, dp+off)
		default:
			return fmt.Errorf("%s: bad discriminant %d", t, d[0])
		}
	case Enum:
		d, err := src.read(sp, 1)
		if err != nil {
			return err
		}
		if int(d[0]) >= len(t.Cases) {
			return fmt.Errorf("%s: bad case %d", t, d[0])
		}
		return dst.write(dp, d)
	case Bool:
		d, err := src.read(sp, 1)
		if err != nil {
			return err
		}
		if d[0] > 1 {
			return fmt.Errorf("bool: bad value %d", d[0])
		}
		return dst.write(dp, d)
	default:
		size, _ := t.SizeAlign()
		b, err := src.read(sp, size)
		if err != nil {
			return err
		}
		return dst.write(dp, b)
	}
}

// Describe renders a named type's layout like the build's
// rule-pack.layout.json, for comparison in tests.
func Describe(t *Type) string {
	size, align := t.SizeAlign()
	var b strings.Builder
	fmt.Fprintf(&b, "%s size=%d align=%d", t.Name, size, align)
	if t.Kind == Record {
		for i, off := range t.Offsets() {
			fmt.Fprintf(&b, " %s:%s@%d", t.Fields[i].Name, t.Fields[i].Type, off)
		}
	}
	if t.Kind == Enum {
		fmt.Fprintf(&b, " cases=%s", strings.Join(t.Cases, ","))
	}
	return b.String()
}
