//go:build unix

package resultsanitizer

import (
	"os"
	"syscall"
)

// ownedByMe: fi's owner is this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
