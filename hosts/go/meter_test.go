package resultsanitizer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// Every module of ours (the pipelines, the verifier) can be metered, and
// the metered module compiles (is valid) with the same exports plus the
// fuel global. The packs are never metered (TestPacksRunAsTheyAre).
func TestEveryModuleOfOursIsMetered(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"pipeline.wasm", "pipeline-warm.wasm", "verifier.wasm"} {
		core, err := CoreModule(component(t, name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := meter(core)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rt := wazero.NewRuntime(ctx)
		before, err := rt.CompileModule(ctx, core)
		if err != nil {
			t.Fatal(err)
		}
		after, err := rt.CompileModule(ctx, m)
		if err != nil {
			t.Fatalf("%s: the metered module does not compile: %v", name, err)
		}
		if len(after.ExportedFunctions()) != len(before.ExportedFunctions()) || len(after.ImportedFunctions()) != len(before.ImportedFunctions())+1 {
			t.Fatalf("%s: exports or imports changed", name)
		}
		for n, f := range before.ExportedFunctions() {
			g := after.ExportedFunctions()[n]
			if g == nil || len(g.ParamTypes()) != len(f.ParamTypes()) || len(g.ResultTypes()) != len(f.ResultTypes()) {
				t.Fatalf("%s: export %s changed", name, n)
			}
		}
		t.Logf("%s: %d -> %d bytes", name, len(core), len(m))
		rt.Close(ctx)
	}
}

// A module of one exported function "f" whose body (after its locals) is
// code.
func tinyModule(code ...byte) []byte {
	body := append([]byte{0x00}, code...)
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, 1, []byte{0x01, 0x60, 0x00, 0x00})
	m = appendSection(m, 3, []byte{0x01, 0x00})
	m = appendSection(m, 7, []byte{0x01, 0x01, 'f', 0x00, 0x00})
	return appendSection(m, 10, append([]byte{0x01, byte(len(body))}, body...))
}

// A metered guest that loops is stopped at its call's deadline, without
// wazero's checks (the runtime does not close modules on a done context).
func TestAMeteredLoopStopsAtTheDeadline(t *testing.T) {
	ctx := context.Background()
	m, err := meter(tinyModule(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b)) // loop br 0 end end
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(1, nil, true))
	defer rt.Close(ctx)
	if err := defineFuel(ctx, rt); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateModule(withMemory(ctx), mustCompile(t, rt, m), wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	call, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = mod.ExportedFunction("f").Call(call)
	if err == nil || !errors.Is(call.Err(), context.DeadlineExceeded) {
		t.Fatalf("not stopped at the deadline: %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("stopped after %v", d)
	}
}

// fill is memory.fill(0, 0, n).
func fill(n int32) []byte {
	return append(appendSleb32([]byte{0x41, 0x00, 0x41, 0x00, 0x41}, n), 0xfc, 0x0b, 0x00)
}

// loopOf is loop body br 0 end end.
func loopOf(body ...byte) []byte {
	return append(append(append([]byte{0x03, 0x40}, body...), 0x0c, 0x00, 0x0b), 0x0b)
}

// A module of functions f, g, ... with bodies (no locals), one memory of
// pages pages (0: none).
func moduleOf(pages uint32, bodies ...[]byte) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, 1, []byte{0x01, 0x60, 0x00, 0x00})
	fs := appendU32(nil, uint32(len(bodies)))
	for range bodies {
		fs = append(fs, 0x00)
	}
	m = appendSection(m, 3, fs)
	if pages > 0 {
		m = appendSection(m, 5, appendU32(appendU32([]byte{0x01, 0x01}, pages), pages))
	}
	ex := appendU32(nil, uint32(len(bodies)))
	for i := range bodies {
		ex = append(ex, 0x01, byte('f'+i), 0x00, byte(i))
	}
	m = appendSection(m, 7, ex)
	code := appendU32(nil, uint32(len(bodies)))
	for _, b := range bodies {
		body := append([]byte{0x00}, b...)
		code = append(appendU32(code, uint32(len(body))), body...)
	}
	return appendSection(m, 10, code)
}

// A dependent chain of n (local.get 0, i32.const 7, i32.mul, i32.const 1,
// i32.add, local.set 0) in a loop, in function f of one i32 local.
func straightLine(n int) []byte {
	body := []byte{0x01, 0x01, 0x7f, 0x03, 0x40}
	for i := 0; i < n; i++ {
		body = append(body, 0x20, 0x00, 0x41, 0x07, 0x6c, 0x41, 0x01, 0x6a, 0x21, 0x00)
	}
	body = append(body, 0x0c, 0x00, 0x0b, 0x0b)
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = appendSection(m, 1, []byte{0x01, 0x60, 0x00, 0x00})
	m = appendSection(m, 3, []byte{0x01, 0x00})
	m = appendSection(m, 7, []byte{0x01, 0x01, 'f', 0x00, 0x00})
	return appendSection(m, 10, append(appendU32([]byte{0x01}, uint32(len(body))), body...))
}

// runMetered instantiates meter(orig) and calls f under a deadline of d;
// it returns how long the call took and how many refills it made.
func runMetered(t *testing.T, orig []byte, mib uint32, d time.Duration) (time.Duration, int64, error) {
	t.Helper()
	m, err := meter(orig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(mib, nil, true))
	defer rt.Close(ctx)
	if err := defineFuel(ctx, rt); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateModule(withMemory(ctx), mustCompile(t, rt, m), wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	call, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r0 := refills.Load()
	t0 := time.Now()
	_, err = mod.ExportedFunction("f").Call(call)
	return time.Since(t0), refills.Load() - r0, err
}

// Fuel bounds work, not iterations: a loop of bulk instructions (a 32 MiB
// memory.fill each), one of 120,000 straight-line instructions and an
// empty one all stop at the deadline, and call the host about every
// millisecond on the way (the longest a garbage collection waits for a
// guest; 20 ms allowed here, for a busy machine).
func TestAMeteredGuestCallsTheHostEveryMillisecond(t *testing.T) {
	for name, m := range map[string][]byte{
		"memory.fill 32 MiB": moduleOf(512, loopOf(fill(512*65536)...)),
		"memory.fill 64 B":   moduleOf(1, loopOf(fill(64)...)),
		"straight line":      straightLine(20000),
		"empty":              moduleOf(0, loopOf()),
	} {
		d, n, err := runMetered(t, m, 32, 500*time.Millisecond)
		if err == nil {
			t.Fatalf("%s: not stopped", name)
		}
		if d > 2*time.Second {
			t.Fatalf("%s: stopped after %v", name, d)
		}
		if n == 0 || d/time.Duration(n) > 20*time.Millisecond {
			t.Fatalf("%s: %d refills in %v", name, n, d)
		}
		t.Logf("%s: a refill every %v", name, d/time.Duration(n))
	}
}

// While a metered guest loops on bulk instructions, a garbage collection
// (which stops every goroutine) is not held up by it.
func TestAGCDoesNotWaitForAMeteredGuest(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runMetered(t, moduleOf(512, loopOf(fill(512*65536)...)), 32, 1500*time.Millisecond)
	}()
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	runtime.GC()
	if d := time.Since(t0); d > 200*time.Millisecond {
		t.Errorf("a GC took %v behind a guest", d)
	}
	<-done
}

func mustCompile(t *testing.T, rt wazero.Runtime, m []byte) wazero.CompiledModule {
	t.Helper()
	c, err := rt.CompileModule(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An instruction the rewriter does not read: the module is left as it is
// (and runs under wazero's own deadline checks).
func TestAnUnknownInstructionIsNotMetered(t *testing.T) {
	unknown := tinyModule(0x06, 0x40, 0x0b, 0x0b) // try (legacy exceptions)
	if _, err := meter(unknown); !errors.Is(err, errMeter) {
		t.Fatalf("metered: %v", err)
	}
	mod, ok := metered(unknown)
	if ok || !bytes.Equal(mod, unknown) {
		t.Fatal("not left as it is")
	}
	if _, err := meter(tinyModule(0x01, 0x0b)); err != nil { // nop
		t.Fatal(err)
	}
}

// A rule pack is not ours: it is compiled as it is, imports nothing (not
// even the refill function), and runs in a runtime that closes it when
// its call's context is done (wazero's own checks), while the pipeline
// counts fuel.
func TestPacksRunAsTheyAre(t *testing.T) {
	ctx := context.Background()
	s, err := NewUnverified(ctx, component(t, "pipeline-warm.wasm"), component(t, filepath.Join("test-packs", "slow.wasm")), Config{Verifier: testVerifier(t), PlatformPack: component(t, "default-pack.wasm")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if !s.pipeMetered || !s.verifierMetered(t) {
		t.Fatal("the pipeline or the verifier is not metered")
	}
	for _, m := range []wazero.CompiledModule{s.packMod, s.platMod} {
		if len(m.ImportedFunctions()) != 0 {
			t.Fatal("a pack was rewritten")
		}
		if _, ok := m.ExportedFunctions()[fuelGlobal]; ok {
			t.Fatal("a pack counts fuel")
		}
	}
}

func (s *Sanitizer) verifierMetered(t *testing.T) bool { return s.limits.Verifier.metered }

// The rewriter checks what it moves or adds against the original module:
// a module that is invalid because an index is out of range (or an
// over-long LEB128 would be cut to one in range) is not metered, so the
// rewrite cannot make it valid (and give it the fuel counter or the refill
// function's type).
func TestMeterRefusesInvalidIndices(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for name, m := range map[string][]byte{
		// i64.const -1; global.set 0 (no globals: 0 is the fuel's index after the rewrite)
		"global.set of the fuel": tinyModule(0x42, 0x7f, 0x24, 0x00, 0x0b),
		"global.get of the fuel": tinyModule(0x23, 0x00, 0x1a, 0x0b),
		// call 2^32 in 5 bytes (cut to 32 bits: call 0)
		"an over-long call index": tinyModule(0x10, 0x80, 0x80, 0x80, 0x80, 0x10, 0x0b),
		"a call out of range":     tinyModule(0x10, 0x01, 0x0b),
		// local.get 0 with no locals: the added local's index after the rewrite
		"local.get of the added local": tinyModule(0x20, 0x00, 0x1a, 0x0b),
		// block (type 1): the refill's type after the rewrite
		"a block of the added type": tinyModule(0x02, 0x01, 0x0b, 0x0b),
		// i32.const 0; call_indirect (type 1) (table 0)
		"call_indirect of the added type": tinyModule(0x41, 0x00, 0x11, 0x01, 0x00, 0x0b),
	} {
		if _, err := rt.CompileModule(ctx, m); err == nil {
			t.Fatalf("%s: the original compiles", name)
		}
		if _, err := meter(m); !errors.Is(err, errMeter) {
			t.Errorf("%s: metered (%v)", name, err)
		}
	}
}

// The cache only saves time: a fresh process reads it (its entries are
// found: not written again), a corrupt entry or a directory that cannot
// be made or used falls back to compiling.
func TestTheCompilationCacheOnlySavesTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	verifier, pack := component(t, "verifier.wasm"), component(t, "default-pack.wasm")
	check := func(what, dir string, fallback bool) {
		t.Helper()
		f0 := cacheFallbacks.Load()
		v, err := NewVerifierWithCache(ctx, verifier, dir)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer v.Close(ctx)
		if !v.metered {
			t.Fatalf("%s: the verifier is not metered", what)
		}
		if _, err := v.CheckManifest(ctx, pack); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := cacheFallbacks.Load() - f0; (got == 1) != fallback || got > 1 {
			t.Fatalf("%s: %d fallbacks", what, got)
		}
	}
	check("an empty cache", dir, false)
	entries, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if len(entries) == 0 {
		t.Fatal("nothing cached")
	}
	stat := map[string]os.FileInfo{}
	for _, e := range entries {
		fi, err := os.Stat(e)
		if err != nil {
			t.Fatal(err)
		}
		stat[e] = fi
	}
	check("from the cache", dir, false)
	again, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if len(again) != len(entries) {
		t.Fatalf("entries %d then %d", len(entries), len(again))
	}
	for _, e := range entries { // found, so not compiled and written again
		fi, err := os.Stat(e)
		if err != nil || !os.SameFile(fi, stat[e]) || !fi.ModTime().Equal(stat[e].ModTime()) {
			t.Fatalf("%s was written again: not read from the cache", e)
		}
	}
	for _, e := range entries { // cut short: wazero's CompileModule fails on it
		b, err := os.ReadFile(e)
		if err == nil {
			err = os.WriteFile(e, b[:len(b)/2], 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	check("a corrupt cache", dir, true)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check("a cache under a file", filepath.Join(file, "cache"), false)
	shared := t.TempDir()
	os.Chmod(shared, 0o777)
	check("a shared directory", shared, false)
	if e, _ := os.ReadDir(shared); len(e) != 0 {
		t.Fatal("a shared directory was used")
	}
}

// The rewriter reads our modules' bytes before wazero does: it never
// panics, whatever they are; what it rewrites compiles only if the
// original does (it never makes an invalid module valid), with the same
// exported functions; and an original that compiles and is rewritten
// still compiles.
func FuzzMeter(f *testing.F) {
	f.Add(tinyModule(0x01, 0x0b))
	f.Add(tinyModule(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b))
	f.Add(tinyModule(0x42, 0x7f, 0x24, 0x00, 0x0b))                                  // global.set of the fuel
	f.Add(tinyModule(0x10, 0x80, 0x80, 0x80, 0x80, 0x10, 0x0b))                      // an over-long call index
	f.Add(tinyModule(0x20, 0x00, 0x1a, 0x0b))                                        // the added local
	f.Add(moduleOf(1, loopOf(fill(64)...), append(fill(8), 0x0b)))                   // bulk
	f.Add(moduleOf(1, []byte{0x41, 0x01, 0x40, 0x00, 0x1a, 0x0b}))                   // memory.grow
	f.Add(moduleOf(0, []byte{0x02, 0x40, 0x03, 0x40, 0x0c, 0x01, 0x0b, 0x0b, 0x0b})) // nested
	for _, name := range []string{"slow.wasm", "greedy.wasm"} {
		b, err := os.ReadFile(filepath.Join(root, "target", "components", "test-packs", name))
		if err != nil {
			f.Fatal(err) // make test-packs
		}
		core, err := CoreModule(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(core)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	compile := func(m []byte) (wazero.CompiledModule, error) {
		c, err := rt.CompileModule(ctx, m)
		if err == nil {
			c.Close(ctx)
		}
		return c, err
	}
	f.Fuzz(func(t *testing.T, module []byte) {
		splitData(module)
		m, err := meter(module)
		if err != nil {
			return
		}
		after, errAfter := compile(m)
		before, errBefore := compile(module)
		if errAfter == nil && errBefore != nil {
			t.Fatalf("the rewrite made an invalid module valid: %v", errBefore)
		}
		if errBefore == nil && errAfter != nil {
			t.Fatalf("the rewrite made a valid module invalid: %v", errAfter)
		}
		if errBefore == nil && len(after.ExportedFunctions()) != len(before.ExportedFunctions()) {
			t.Fatalf("exported functions: %d, then %d", len(before.ExportedFunctions()), len(after.ExportedFunctions()))
		}
	})
}
