//go:build linux

package resultsanitizer

import "os"

// Linux's lseek whence values for a sparse file's data and holes.
const (
	seekDataWhence = 3 // SEEK_DATA
	seekHoleWhence = 4 // SEEK_HOLE
)

// seekData is the offset of the first data at or after off (ENXIO: none).
func seekData(f *os.File, off uint64) (uint64, error) {
	n, err := f.Seek(int64(off), seekDataWhence)
	return uint64(n), err
}

// seekHole is the offset of the first hole at or after off (the end of the
// file counts as one).
func seekHole(f *os.File, off uint64) (uint64, error) {
	n, err := f.Seek(int64(off), seekHoleWhence)
	return uint64(n), err
}
