package resultsanitizer

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tetratelabs/wazero"
)

// memorySide is a page of a real wazero memory with a bump allocator.
func memorySide(t *testing.T) Side {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	// A module that exports one page of memory as "mem".
	bin := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 7, 1, 3, 'm', 'e', 'm', 2, 0}
	m, err := r.Instantiate(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	next := uint32(4096)
	return Side{Mem: m.Memory(), Alloc: func(align, size uint32) (uint32, error) {
		next = (next + align - 1) / align * align
		p := next
		next += size
		return p, nil
	}}
}

// A rule's description is lowered empty, its bytes not even read (here
// out of bounds), while its id is copied whole.
func TestARulesDescriptionIsLoweredEmpty(t *testing.T) {
	src, dst := memorySide(t), memorySide(t)
	off := Rule.Offsets()
	header := func(ptr, n uint32) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, ptr)
		binary.LittleEndian.PutUint32(b[4:], n)
		return b
	}
	src.Mem.Write(100, []byte("rule-id"))
	src.Mem.Write(off[0], header(100, 7))
	src.Mem.Write(off[1], header(0xffff_ff00, 200))
	if err := Copy(Rule, src, 0, dst, 512); err != nil {
		t.Fatal(err)
	}
	id, _ := dst.Mem.Read(512+off[0], 8)
	b, _ := dst.Mem.Read(binary.LittleEndian.Uint32(id), binary.LittleEndian.Uint32(id[4:]))
	desc, _ := dst.Mem.Read(512+off[1], 8)
	if string(b) != "rule-id" || binary.LittleEndian.Uint32(desc[4:]) != 0 {
		t.Fatalf("id %q, description of %d bytes", b, binary.LittleEndian.Uint32(desc[4:]))
	}
	// Any other string is read, and a bad one refused.
	src.Mem.Write(off[0], header(0xffff_ff00, 200))
	if err := Copy(Rule, src, 0, dst, 512); err == nil {
		t.Fatal("an out-of-bounds id was copied")
	}
}
