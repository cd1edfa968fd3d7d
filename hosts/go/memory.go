package resultsanitizer

import (
	"context"
	"runtime"

	"github.com/tetratelabs/wazero/experimental"
)

// Linear memories. wazero's own keeps a guest's memory in a Go slice that
// a memory.grow reallocates and copies: the pipeline's allocator grows it
// page by page as a call's values come in, and each grow copied the whole
// memory (the warm pipeline's is 40 MB to start with), which took most of
// a call's time. Here a memory reserves its maximum (the runtime's cap,
// Config.MemoryMiB: a guest cannot grow past it either way) as untouched
// address space from the system, and a grow only lengthens the slice:
// nothing is copied, pages are given (zeroed) by the system as the guest
// first touches them, and the whole mapping is returned when the instance
// is closed. Where the system has no mmap, or refuses the reservation,
// the memory is a Go slice that doubles (copied, as few times as that).

// withMemory is ctx for InstantiateModule: the guest's memory from
// newMemory.
func withMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(newMemory))
}

func newMemory(capacity, max uint64) experimental.LinearMemory {
	if r := reserve(max); r != nil {
		m := &mappedMemory{r: r}
		// An instance dropped without Close: its mapping goes with it.
		runtime.AddCleanup(m, func(r *region) { r.free() }, r)
		return m
	}
	return &heapMemory{buf: make([]byte, 0, capacity), max: max}
}

// region is address space reserved by mmap: len(buf) bytes, the memory's
// maximum.
type region struct {
	buf   []byte
	freed bool
}

// mappedMemory is a memory in a region: it never moves.
type mappedMemory struct{ r *region }

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if m.r.freed || size > uint64(len(m.r.buf)) {
		return nil
	}
	return m.r.buf[:size:size]
}

func (m *mappedMemory) Free() { m.r.free() }

// heapMemory is a Go slice that doubles when it grows.
type heapMemory struct {
	buf []byte
	max uint64
}

func (h *heapMemory) Reallocate(size uint64) []byte {
	if size > h.max {
		return nil
	}
	if size > uint64(cap(h.buf)) {
		b := make([]byte, size, min(h.max, max(size, 2*uint64(cap(h.buf)))))
		copy(b, h.buf)
		h.buf = b
	}
	h.buf = h.buf[:size]
	return h.buf
}

func (h *heapMemory) Free() { h.buf = nil }
