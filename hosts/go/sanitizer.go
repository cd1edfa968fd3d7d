// Package resultsanitizer is the Go host of the result-sanitizer pipeline:
// the same wasm as the Rust host, run by wazero (pure Go, no cgo).
//
// # Model
//
// The pipeline and the rule packs are core modules (taken out of their
// component files), the pipeline in one wazero runtime and the packs in
// another, each memory under its own cap. The pipeline imports two packs:
// `platform` (the platform's floor, Config.PlatformPack) and `rule-pack`
// (the tenant's); each import's four functions are Go functions that call
// that pack's exports and copy values between the memories through the
// canonical ABI (abi.go). A tenant rule set's `relax` keeps only the ids
// its verified signature grants (`may_relax`); the platform's is emptied.
// Calls go through the pipeline's JSON twin
// (`sanitize-json`, `effective-budget-json`, `drain-json`): strings in,
// strings out.
//
// A pack given to New is verified first by the verifier component
// (Config.Verifier: signature, trusted key, expiry, WIT version, tenant
// scope; the Rust host's code, so its order and refusal kinds), before any
// of it is compiled. NewUnverified is for the default pack built with this
// repository (as the Rust host's embedded pack) and for development.
//
// Every call runs under a context deadline; after a deadline or a trap the
// instances are dropped and the next call gets fresh ones.
package resultsanitizer

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

const (
	rulePack  = "result-sanitizer:core/rule-pack@" + WITVersion
	platformI = "result-sanitizer:core/platform@" + WITVersion
	pipelineI = "result-sanitizer:core/result-sanitizer@" + WITVersion
)

// Config of one Sanitizer: limits and the compilation cache.
type Config struct {
	// Timeout of one call (context deadline). Default 5 s.
	Timeout time.Duration
	// MemoryMiB caps the pipeline's memory. Default 256.
	MemoryMiB uint32
	// PackMemoryMiB caps the pack's memory. Default 32.
	PackMemoryMiB uint32
	// CacheDir keeps wazero's compiled code between processes (a command
	// that starts per call compiles the 8 MB pipeline once, not each
	// time), one file per module, named by the sha256 of its bytes. Empty:
	// no cache. A cache that cannot be opened, read or written only costs
	// the compilation (cache.go).
	CacheDir string
	// PlatformPack is the platform's pack component, whose rules apply
	// whatever the tenant's pack says (the operator's own file: it is not
	// verified; the default pack, target/components/default-pack.wasm,
	// unless the operator has one). New requires it: a tenant's pack is
	// never the whole policy. With NewUnverified, nil makes the pack given
	// the platform's too (the default pack, or development).
	PlatformPack []byte
	// Trust is what New requires of the pack. The zero value refuses
	// every pack: unsigned ones, and signed ones as no key is trusted.
	Trust Trust
	// Verifier runs the pack checks (NewVerifier over
	// target/components/verifier.wasm); New and NewUnverified require it.
	// One serves any number of sanitizers.
	Verifier *Verifier
}

func (l Config) withDefaults() Config {
	if l.Timeout == 0 {
		l.Timeout = 5 * time.Second
	}
	if l.MemoryMiB == 0 {
		l.MemoryMiB = 256
	}
	if l.PackMemoryMiB == 0 {
		l.PackMemoryMiB = 32
	}
	return l
}

// ErrTimeout: a call passed its deadline and was stopped.
var ErrTimeout = errors.New("the pipeline exceeded its time limit")

// TrapError: a guest trapped (a panic, a memory cap hit, a bad value).
type TrapError struct{ Reason string }

func (e *TrapError) Error() string { return "the pipeline trapped: " + e.Reason }

// SanitizeError: the pipeline refused the call (a typed error). Kind is
// "invalid options", "invalid input" or "invalid rule pack", the words the
// Rust CLI prints; the JSON twin's `{"Err": {...}}` spells them
// invalid_options, invalid_input and invalid_pack.
type SanitizeError struct{ Kind, Message string }

func (e *SanitizeError) Error() string { return e.Kind + ": " + e.Message }

// Sanitizer runs the pipeline with one pack. Safe for concurrent use
// (calls are serialized).
type Sanitizer struct {
	limits   Config
	mu       sync.Mutex
	pipeRT   wazero.Runtime
	packRT   wazero.Runtime
	pipeMod  wazero.CompiledModule
	packMod  wazero.CompiledModule
	platMod  wazero.CompiledModule   // nil: packMod serves as the platform's
	cache    wazero.CompilationCache // nil: none
	image    []segment               // the pipeline's data, written at instantiation
	pipeline api.Module              // nil: instantiate before the next call
	pack     api.Module
	platform api.Module // the platform pack's instance (pack when the same)
	grant    []string   // platform rule ids the pack's signature lets it relax
}

// New verifies the pack component under limits.Trust (errors are
// *PackRefusedError), then compiles the pipeline and pack components
// (.wasm bytes).
func New(ctx context.Context, pipelineComponent, packComponent []byte, limits Config) (*Sanitizer, error) {
	if limits.Verifier == nil {
		return nil, errNoVerifier
	}
	v, err := limits.Verifier.Verify(ctx, packComponent, limits.Trust)
	if err != nil {
		return nil, err
	}
	if limits.PlatformPack == nil {
		return nil, errors.New("platform pack: New needs Config.PlatformPack (the default pack, target/components/default-pack.wasm, unless the platform has one): a tenant's pack is never the whole policy")
	}
	var grant []string
	if v.Signed != nil {
		grant = v.Signed.MayRelax
	}
	return newSanitizer(ctx, pipelineComponent, packComponent, limits, grant)
}

// NewUnverified is New without the signature check, for the default pack
// built with this repository (target/components/default-pack.wasm) and
// for development. The pack's manifest and WIT version are still checked
// before anything is compiled.
func NewUnverified(ctx context.Context, pipelineComponent, packComponent []byte, limits Config) (*Sanitizer, error) {
	if limits.Verifier == nil {
		return nil, errNoVerifier
	}
	if _, err := limits.Verifier.CheckManifest(ctx, packComponent); err != nil {
		return nil, err
	}
	return newSanitizer(ctx, pipelineComponent, packComponent, limits, nil)
}

var errNoVerifier = errors.New("verifier: New and NewUnverified need Config.Verifier (NewVerifier over target/components/verifier.wasm)")

// newSanitizer compiles; grant is the platform rules the pack's verified
// signature lets it turn off (its `may_relax`). With limits.CacheDir, from
// the compilation cache, or without it when the cache fails (cache.go).
func newSanitizer(ctx context.Context, pipelineComponent, packComponent []byte, limits Config, grant []string) (*Sanitizer, error) {
	limits = limits.withDefaults()
	pipeCore, err := CoreModule(pipelineComponent)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	packCore, err := CoreModule(packComponent)
	if err != nil {
		return nil, fmt.Errorf("rule pack: %w", err)
	}
	var platCore []byte
	if limits.PlatformPack != nil {
		if platCore, err = CoreModule(limits.PlatformPack); err != nil {
			return nil, fmt.Errorf("platform pack: %w", err)
		}
	}
	// The pipeline's memory image written by the host (image.go); fuel
	// counted by the guests (meter.go), per runtime.
	pipeCore, image, _ := splitData(pipeCore)
	pipe, pipeMetered := metered(pipeCore)
	packs, packsMetered := metered(packCore, platCore)
	return withCache(ctx, limits.CacheDir, func(cache wazero.CompilationCache) (*Sanitizer, error) {
		s := &Sanitizer{limits: limits, grant: grant, cache: cache, image: image}
		if err := s.compile(ctx, pipe[0], pipeMetered, packs[0], packs[1], packsMetered); err != nil {
			s.closeRuntimes(ctx)
			return nil, err
		}
		return s, nil
	})
}

// compile makes the runtimes and compiles the modules (platCore nil: the
// pack serves as the platform's).
func (s *Sanitizer) compile(ctx context.Context, pipeCore []byte, pipeMetered bool, packCore, platCore []byte, packsMetered bool) error {
	var err error
	s.pipeRT = wazero.NewRuntimeWithConfig(ctx, runtimeConfig(s.limits.MemoryMiB, s.cache, pipeMetered))
	s.packRT = wazero.NewRuntimeWithConfig(ctx, runtimeConfig(s.limits.PackMemoryMiB, s.cache, packsMetered))
	if pipeMetered {
		if err := defineFuel(ctx, s.pipeRT); err != nil {
			return err
		}
	}
	if packsMetered {
		if err := defineFuel(ctx, s.packRT); err != nil {
			return err
		}
	}
	if s.packMod, err = s.packRT.CompileModule(ctx, packCore); err != nil {
		return fmt.Errorf("rule pack: %w", err)
	}
	if importsAny(s.packMod, packsMetered) {
		return errors.New("rule pack: packs may import nothing")
	}
	if platCore != nil {
		if s.platMod, err = s.packRT.CompileModule(ctx, platCore); err != nil {
			return fmt.Errorf("platform pack: %w", err)
		}
		if importsAny(s.platMod, packsMetered) {
			return errors.New("platform pack: packs may import nothing")
		}
	}
	if err := s.defineImports(ctx); err != nil {
		return err
	}
	if s.pipeMod, err = s.pipeRT.CompileModule(ctx, pipeCore); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}

func (s *Sanitizer) closeRuntimes(ctx context.Context) {
	if s.pipeRT != nil {
		s.pipeRT.Close(ctx)
	}
	if s.packRT != nil {
		s.packRT.Close(ctx)
	}
}

// Close releases everything, after the call in progress if any (an
// instance's memory is unmapped when it is closed: memory.go).
func (s *Sanitizer) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeRuntimes(ctx)
	if s.cache != nil {
		// The cache's engine holds the compiled code while it is open.
		s.cache.Close(ctx)
	}
	return nil
}

func (s *Sanitizer) instantiate(ctx context.Context) error {
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	ctx = withMemory(ctx)
	var err error
	if s.pack, err = s.packRT.InstantiateModule(ctx, s.packMod, mc); err != nil {
		return fmt.Errorf("rule pack: %w", err)
	}
	s.platform = s.pack
	if s.platMod != nil {
		if s.platform, err = s.packRT.InstantiateModule(ctx, s.platMod, mc); err != nil {
			s.pack.Close(ctx)
			return fmt.Errorf("platform pack: %w", err)
		}
	}
	if s.pipeline, err = s.pipeRT.InstantiateModule(ctx, s.pipeMod, mc); err == nil {
		err = applyData(s.pipeline, s.image)
	}
	if err != nil {
		s.drop(ctx)
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}

func (s *Sanitizer) drop(ctx context.Context) {
	if s.pipeline != nil {
		s.pipeline.Close(ctx)
	}
	if s.platform != nil && s.platform != s.pack {
		s.platform.Close(ctx)
	}
	if s.pack != nil {
		s.pack.Close(ctx)
	}
	s.pipeline, s.pack, s.platform = nil, nil, nil
}

func side(ctx context.Context, m api.Module) Side {
	realloc := m.ExportedFunction("cabi_realloc")
	return Side{Mem: m.Memory(), Alloc: func(align, size uint32) (uint32, error) {
		if realloc == nil {
			return 0, errors.New("no cabi_realloc export")
		}
		r, err := realloc.Call(ctx, 0, 0, uint64(align), uint64(size))
		if err != nil {
			return 0, err
		}
		return uint32(r[0]), nil
	}}
}

// callPack calls export `name` of pack instance pk, returning a value of
// type t through a return area, and copies the value to the pipeline at dst.
func callPack(ctx context.Context, pk, pipe api.Module, name string, t *Type, dst uint32, args ...uint64) {
	f := pk.ExportedFunction(rulePack + "#" + name)
	if f == nil {
		panic(fmt.Errorf("rule pack has no export %s", name))
	}
	r, err := f.Call(ctx, args...)
	if err != nil {
		panic(err)
	}
	if err := Copy(t, side(ctx, pk), uint32(r[0]), side(ctx, pipe), dst); err != nil {
		panic(fmt.Errorf("rule pack %s returned a bad value: %w", name, err))
	}
	if post := pk.ExportedFunction("cabi_post_" + rulePack + "#" + name); post != nil {
		if _, err := post.Call(ctx, r[0]); err != nil {
			panic(err)
		}
	}
}

// keepRelax rewrites, in the pipeline's memory, the `relax` list of the
// rule set at rs to the ids in allowed (order kept).
func keepRelax(m api.Module, rs uint32, allowed []string) {
	at := rs + RuleSet.Offsets()[len(RuleSet.Fields)-1]
	mem := m.Memory()
	ptr, ok1 := mem.ReadUint32Le(at)
	n, ok2 := mem.ReadUint32Le(at + 4)
	if !ok1 || !ok2 {
		panic(errors.New("rules: relax list out of bounds"))
	}
	kept := uint32(0)
	for i := uint32(0); i < n; i++ {
		pair, ok := mem.Read(ptr+8*i, 8)
		if !ok {
			panic(errors.New("rules: relax entry out of bounds"))
		}
		id, ok := mem.Read(binary.LittleEndian.Uint32(pair), binary.LittleEndian.Uint32(pair[4:]))
		if !ok {
			panic(errors.New("rules: relax id out of bounds"))
		}
		for _, a := range allowed {
			if a == string(id) {
				mem.Write(ptr+8*kept, append([]byte(nil), pair...))
				kept++
				break
			}
		}
	}
	mem.WriteUint32Le(at+4, kept)
}

// defineImports links the pipeline's `platform` import to the platform
// pack and its `rule-pack` import to the tenant's.
func (s *Sanitizer) defineImports(ctx context.Context) error {
	if err := s.definePack(ctx, platformI, func() api.Module { return s.platform }, nil); err != nil {
		return err
	}
	return s.definePack(ctx, rulePack, func() api.Module { return s.pack }, s.grant)
}

// definePack defines host module `name`: the four rule-pack functions,
// forwarded to the instance pk returns; a rule set's `relax` keeps only
// the ids in relax.
func (s *Sanitizer) definePack(ctx context.Context, name string, pk func() api.Module, relax []string) error {
	i32 := api.ValueTypeI32
	b := s.pipeRT.NewHostModuleBuilder(name)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
		callPack(ctx, pk(), m, "info", PackInfo, uint32(st[0]))
	}), []api.ValueType{i32}, nil).Export("info")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
		callPack(ctx, pk(), m, "rules", RuleSet, uint32(st[0]))
		keepRelax(m, uint32(st[0]), relax)
	}), []api.ValueType{i32}, nil).Export("rules")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
		r, err := pk().ExportedFunction(rulePack + "#has-detect").Call(ctx)
		if err != nil {
			panic(err)
		}
		st[0] = r[0] & 1
	}), nil, []api.ValueType{i32}).Export("has-detect")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
		// The text goes to the pack's memory first: copy the (ptr, len)
		// pair through a scratch header in the pipeline's memory.
		hdr := make([]byte, 8)
		binary.LittleEndian.PutUint32(hdr, uint32(st[0]))
		binary.LittleEndian.PutUint32(hdr[4:], uint32(st[1]))
		ret := uint32(st[2])
		if !m.Memory().Write(ret, hdr) {
			panic(errors.New("detect: return area out of bounds"))
		}
		p := pk()
		ps := side(ctx, p)
		scratch, err := ps.Alloc(4, 8)
		if err != nil {
			panic(err)
		}
		if err := Copy(str, side(ctx, m), ret, ps, scratch); err != nil {
			panic(err)
		}
		ptr, _ := p.Memory().ReadUint32Le(scratch)
		n, _ := p.Memory().ReadUint32Le(scratch + 4)
		callPack(ctx, p, m, "detect", Findings, ret, uint64(ptr), uint64(n))
	}), []api.ValueType{i32, i32, i32}, nil).Export("detect")
	_, err := b.Instantiate(ctx)
	return err
}

// call runs a string -> string export of the pipeline under the deadline.
func (s *Sanitizer) call(ctx context.Context, export, arg string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.limits.Timeout)
	defer cancel()
	if s.pipeline == nil {
		if err := s.instantiate(ctx); err != nil {
			s.drop(context.Background())
			return "", err
		}
	}
	out, err := s.callString(ctx, export, arg)
	if err != nil {
		// Never enter an instance again after a failure.
		s.drop(context.Background())
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("%w (%s)", ErrTimeout, s.limits.Timeout)
		}
		var exit *sys.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded {
			return "", fmt.Errorf("%w (%s)", ErrTimeout, s.limits.Timeout)
		}
		return "", &TrapError{Reason: firstLine(err.Error())}
	}
	return out, nil
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

func (s *Sanitizer) callString(ctx context.Context, export, arg string) (string, error) {
	m := s.pipeline
	f := m.ExportedFunction(pipelineI + "#" + export)
	if f == nil {
		return "", fmt.Errorf("pipeline has no export %s", export)
	}
	ptr, err := side(ctx, m).Alloc(1, uint32(len(arg)))
	if err != nil {
		return "", err
	}
	if !m.Memory().Write(ptr, []byte(arg)) {
		return "", errors.New("argument out of bounds")
	}
	r, err := f.Call(ctx, uint64(ptr), uint64(len(arg)))
	if err != nil {
		return "", err
	}
	p, ok1 := m.Memory().ReadUint32Le(uint32(r[0]))
	n, ok2 := m.Memory().ReadUint32Le(uint32(r[0]) + 4)
	b, ok3 := m.Memory().Read(p, n)
	if !ok1 || !ok2 || !ok3 {
		return "", errors.New("result out of bounds")
	}
	out := string(b) // copies
	if post := m.ExportedFunction("cabi_post_" + pipelineI + "#" + export); post != nil {
		if _, err := post.Call(ctx, r[0]); err != nil {
			return "", err
		}
	}
	return out, nil
}

// SanitizeJSON is the JSON twin: request string in, response string out,
// byte for byte what every host returns.
func (s *Sanitizer) SanitizeJSON(ctx context.Context, request string) (string, error) {
	return s.call(ctx, "sanitize-json", request)
}

// Budget is the budget the pipeline applies (to cap reading).
type Budget struct {
	MaxBytes    uint64 `json:"max_bytes"`
	MaxChars    uint32 `json:"max_chars"`
	HeadChars   uint32 `json:"head_chars"`
	TailChars   uint32 `json:"tail_chars"`
	MaxTokens   uint32 `json:"max_tokens"`
	MarkupBytes uint64 `json:"markup_bytes"`
	// ReadBytes is how many bytes of the output a host reads for these
	// options: the byte cap + 1, the markup budget + 1 for a declared
	// text/html content type, the MCP input bound (64 MiB) + 1 for MCP
	// input, which a host refuses when it reads that many.
	ReadBytes uint64 `json:"read_bytes"`
	// HeadBytes and TailBytes: what a host keeps of the start and the end
	// when it reads a longer raw output as head + tail (ReadHeadTail); 0
	// when the output is read whole under ReadBytes.
	HeadBytes uint64 `json:"head_bytes"`
	TailBytes uint64 `json:"tail_bytes"`
}

// EffectiveBudget asks the pipeline for the budget of these options (the
// JSON twin's options object).
func (s *Sanitizer) EffectiveBudget(ctx context.Context, options map[string]any) (Budget, error) {
	req, _ := json.Marshal(options)
	out, err := s.call(ctx, "effective-budget-json", string(req))
	if err != nil {
		return Budget{}, err
	}
	var r struct {
		Ok  *Budget
		Err map[string]string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return Budget{}, err
	}
	if r.Ok == nil {
		return Budget{}, toError(r.Err)
	}
	return *r.Ok, nil
}

// Sanitized is one tool message and its record.
type Sanitized struct {
	// Message is the tool message as JSON, ready to send.
	Message string          `json:"message"`
	Record  json.RawMessage `json:"record"`
	IsError bool            `json:"is_error"`
}

// The twin's Err cases (snake_case, as every enum case in its JSON) to
// SanitizeError kinds.
var kinds = map[string]string{"invalid_options": "invalid options", "invalid_input": "invalid input", "invalid_pack": "invalid rule pack"}

func toError(e map[string]string) error {
	for k, v := range e {
		if h, ok := kinds[k]; ok {
			k = h
		}
		return &SanitizeError{Kind: k, Message: v}
	}
	return errors.New("empty error")
}

// Sanitize runs the pipeline on input with options (the JSON twin's
// options object: field names and enum cases alike in snake_case, e.g.
// {"format": "openai", "encoding": "cl100k_base", "max_tokens": 4000}).
func (s *Sanitizer) Sanitize(ctx context.Context, input []byte, options map[string]any) (*Sanitized, error) {
	req := map[string]any{"options": options}
	if isUTF8(input) {
		req["input"] = string(input)
	} else {
		req["input_base64"] = input
	}
	b, _ := json.Marshal(req)
	out, err := s.SanitizeJSON(ctx, string(b))
	if err != nil {
		return nil, err
	}
	var r struct {
		Ok  *Sanitized
		Err map[string]string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return nil, err
	}
	if r.Ok == nil {
		return nil, toError(r.Err)
	}
	return r.Ok, nil
}
