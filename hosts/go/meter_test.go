package resultsanitizer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// Every module this host runs can be metered, and the metered module
// compiles (is valid) with the same exports plus the fuel global.
func TestEveryModuleIsMetered(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"pipeline.wasm", "pipeline-warm.wasm", "default-pack.wasm", "verifier.wasm", filepath.Join("test-packs", "slow.wasm"), filepath.Join("test-packs", "greedy.wasm")} {
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
	mods, ok := metered(unknown)
	if ok || !bytes.Equal(mods[0], unknown) {
		t.Fatal("not left as it is")
	}
	if _, err := meter(tinyModule(0x01, 0x0b)); err != nil { // nop
		t.Fatal(err)
	}
}

// The cache only saves time: a fresh process reads it, a corrupt entry or
// a directory that cannot be made falls back to compiling.
func TestTheCompilationCacheOnlySavesTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	verifier, pack := component(t, "verifier.wasm"), component(t, "default-pack.wasm")
	check := func(what, dir string) {
		v, err := NewVerifierWithCache(ctx, verifier, dir)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer v.Close(ctx)
		if _, err := v.CheckManifest(ctx, pack); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check("an empty cache", dir)
	entries, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	if len(entries) == 0 {
		t.Fatal("nothing cached")
	}
	check("from the cache", dir)
	for _, e := range entries { // cut short: wazero's CompileModule fails on it
		b, err := os.ReadFile(e)
		if err == nil {
			err = os.WriteFile(e, b[:len(b)/2], 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	check("a corrupt cache", dir)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check("a cache under a file", filepath.Join(file, "cache"))
}

// The rewriter reads a pack's bytes (after its verification, before wazero
// does): it never panics, whatever they are.
func FuzzMeter(f *testing.F) {
	f.Add(tinyModule(0x01, 0x0b))
	f.Add(tinyModule(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b))
	for _, name := range []string{"slow.wasm", "greedy.wasm"} {
		if b, err := os.ReadFile(filepath.Join(root, "target", "components", "test-packs", name)); err == nil {
			if core, err := CoreModule(b); err == nil {
				f.Add(core)
			}
		}
	}
	f.Fuzz(func(t *testing.T, module []byte) {
		meter(module)
		splitData(module)
	})
}
