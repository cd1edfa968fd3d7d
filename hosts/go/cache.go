package resultsanitizer

import (
	"context"

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

// openCache opens the cache in dir: nil (no cache) when dir is empty or
// cannot be opened.
func openCache(dir string) wazero.CompilationCache {
	if dir == "" {
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
	return build(nil)
}
