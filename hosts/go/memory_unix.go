//go:build linux || darwin

package resultsanitizer

import "syscall"

// reserve maps size bytes of zeroed, private, read-write memory that the
// system backs only as it is touched (nil: refused, or nothing to map).
func reserve(size uint64) *region {
	if size == 0 || size != uint64(int(size)) {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return &region{buf: b}
}

func (r *region) free() {
	if r.freed {
		return
	}
	r.freed = true
	syscall.Munmap(r.buf)
}
