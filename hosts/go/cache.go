package resultsanitizer

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
)

// The compilation cache (Config.CacheDir, NewVerifierWithCache) is
// wazero's: native code for a core module, in a file named by the sha256
// of the module's bytes (with wazero's own tag and the CPU's features),
// under a directory per wazero version, architecture and OS, written to a
// temporary file and renamed, with a checksum over the code. A module
// changed by a rebuild gets a new entry; one whose entry is missing is
// compiled and the entry written.
//
// The cache only ever saves time: a directory that cannot be opened, an
// entry that cannot be read back (truncated, corrupt, from another
// build of wazero) or written (a read-only or full disk) makes the
// module compile in memory as without a cache; it never fails a call.

//
// The cache's entries are native code this process runs, so the cache is
// used only in a directory of this user's that no one else can write to
// (as the JavaScript host's pack cache): dir, made 0700 when missing, and
// every directory in it (wazero's, one per version), must be directories,
// not symbolic links, owned by this user, not writable by the group or
// others (cacheDirOK). Else there is no cache: anyone who can write there
// (a shared path in $RESULT_SANITIZER_GO_CACHE, a planted directory in
// /tmp) could plant an entry.

// openCache opens the cache in dir: nil (no cache) when dir is empty, is
// not safe (cacheDirOK) or cannot be opened.
func openCache(dir string) wazero.CompilationCache {
	if dir == "" || !cacheDirOK(dir) {
		return nil
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil
	}
	return c
}

// runtimeConfig is the runtime configuration of every runtime here: the
// memory cap, the cache, and, for modules that do not count fuel
// (meter.go), the context's deadline closing the module.
func runtimeConfig(mib uint32, cache wazero.CompilationCache, metered bool) wazero.RuntimeConfig {
	c := wazero.NewRuntimeConfig().WithMemoryLimitPages(mib * 16).WithCloseOnContextDone(!metered)
	if cache != nil {
		c = c.WithCompilationCache(cache)
	}
	return c
}

// withCache runs build with the cache in dir, and again without a cache
// when that fails with one: wazero fails CompileModule when a cache entry
// cannot be read back or written, which must not fail the caller. An
// error of build's own (a bad module) comes back from the second try.
func withCache[T any](ctx context.Context, dir string, build func(wazero.CompilationCache) (T, error)) (T, error) {
	cache := openCache(dir)
	if cache == nil {
		return build(nil)
	}
	v, err := build(cache)
	if err == nil {
		return v, nil
	}
	cache.Close(ctx)
	cacheFallbacks.Add(1)
	return build(nil)
}

// cacheFallbacks counts the builds retried without the cache (the tests
// check a corrupt entry is one).
var cacheFallbacks atomic.Int64

// cacheDirOK makes dir (0700) when missing and says whether it and the
// directories in it are this user's alone (see openCache).
func cacheDirOK(dir string) bool {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	if !ownDir(dir) {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 || (e.IsDir() && !ownDir(filepath.Join(dir, e.Name()))) {
			return false
		}
	}
	return true
}

// ownDir: path is a directory (not a symbolic link to one), owned by this
// user (where the system has owners), not writable by the group or others.
func ownDir(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	return ownedByMe(fi)
}
