//go:build !linux && !darwin

package resultsanitizer

// reserve: no mmap here; memories are Go slices (heapMemory).
func reserve(uint64) *region { return nil }

func (r *region) free() { r.freed = true }
