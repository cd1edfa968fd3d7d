package resultsanitizer

// Benchmarks of one sanitize call on about 256 KiB of log text, and of
// what the command does in a fresh process (hosts/go/README.md, Speed):
//
//	go test -run XXX -bench . -cpuprofile cpu.prof
//	RS_BENCH_PIPELINE=pipeline.wasm go test -run XXX -bench .
//
// The pipeline is target/components/pipeline-warm.wasm unless
// $RS_BENCH_PIPELINE names another file there.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logText is n bytes of a plain text log (an error line in 500).
func logText(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%500 == 250 {
			fmt.Fprintf(&b, "2026-12-04T21:00:00Z ERROR worker[3] failed to connect to db: connection refused (attempt %d)\n", i)
		} else {
			fmt.Fprintf(&b, "2026-12-04T21:%02d:00Z INFO worker[%d] processed request id=%d path=/api/v1/items/%d status=200 took=%dms\n", i%60, i%8, i*7919%100003, i, i%97)
		}
	}
	return []byte(b.String()[:n])
}

func benchComponent(b *testing.B, name string) []byte {
	b.Helper()
	w, err := os.ReadFile(filepath.Join(root, "target", "components", name))
	if err != nil {
		b.Skipf("%v (run `make build` first)", err)
	}
	return w
}

func benchPipeline() string {
	if p := os.Getenv("RS_BENCH_PIPELINE"); p != "" {
		return p
	}
	return "pipeline-warm.wasm"
}

func benchSanitizer(b *testing.B) (*Sanitizer, context.Context) {
	b.Helper()
	ctx := context.Background()
	v, err := NewVerifier(ctx, benchComponent(b, "verifier.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewUnverified(ctx, benchComponent(b, benchPipeline()), benchComponent(b, "default-pack.wasm"), Config{Verifier: v})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(ctx); v.Close(ctx) })
	return s, ctx
}

// One sanitize call on 256 KiB of log text, the instance already made.
func BenchmarkSanitize256KiB(b *testing.B) {
	s, ctx := benchSanitizer(b)
	in := logText(256 << 10)
	opts := map[string]any{"tool": "shell"}
	if _, err := s.Sanitize(ctx, in, opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.Sanitize(ctx, in, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// The first call on a fresh instance (as after a trap): instantiation
// included.
func BenchmarkFirstSanitize256KiB(b *testing.B) {
	s, ctx := benchSanitizer(b)
	in := logText(256 << 10)
	opts := map[string]any{"tool": "shell"}
	b.ResetTimer()
	for range b.N {
		s.mu.Lock()
		s.drop(ctx)
		s.mu.Unlock()
		if _, err := s.Sanitize(ctx, in, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// What the command does in a fresh process, its compiled code in the
// cache: the verifier, the sanitizer, the budget, one call on 300 KB.
func BenchmarkCommandLike(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	in := logText(300_000)
	run := func() {
		v, err := NewVerifierWithCache(ctx, benchComponent(b, "verifier.wasm"), dir)
		if err != nil {
			b.Fatal(err)
		}
		defer v.Close(ctx)
		pack := benchComponent(b, "default-pack.wasm")
		s, err := NewUnverified(ctx, benchComponent(b, benchPipeline()), pack, Config{Verifier: v, PlatformPack: pack, CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close(ctx)
		opts := map[string]any{"tool": "shell", "source": "file", "total_bytes": len(in), "file_name": "x.log"}
		if _, err := s.EffectiveBudget(ctx, opts); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Sanitize(ctx, in, opts); err != nil {
			b.Fatal(err)
		}
	}
	run() // fills the cache
	b.ResetTimer()
	for range b.N {
		run()
	}
}
