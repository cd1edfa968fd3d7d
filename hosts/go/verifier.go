package resultsanitizer

// The pack checks are the verifier component's (verifier/ in this
// repository: the Rust pack-format crate built for wasm), run here on
// wazero through its JSON twin `verify-json`. So this host decides and
// words every refusal as the Rust, JavaScript and Python hosts do, from
// one implementation; nothing in Go reads a pack's bytes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

const verifierI = "result-sanitizer:core/pack-verifier@" + WITVersion

// Limits of one verification: a pack is at most PackBytesLimit bytes, and
// the checks are one pass, a sha256 and one signature.
const (
	verifierMemoryMiB = 64
	verifierTimeout   = 5 * time.Second
)

// Verifier runs the pack checks. Compile it once (NewVerifier) and share
// it: it is safe for concurrent use (calls are serialized), and after a
// trap or a deadline the next call gets a fresh instance.
type Verifier struct {
	mu       sync.Mutex
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	mod      api.Module              // nil: instantiate before the next call
	cache    wazero.CompilationCache // nil: none
}

// NewVerifier compiles the verifier component (.wasm bytes,
// target/components/verifier.wasm after `make build`).
func NewVerifier(ctx context.Context, component []byte) (*Verifier, error) {
	return NewVerifierWithCache(ctx, component, "")
}

// NewVerifierWithCache is NewVerifier with wazero's compilation cache in
// cacheDir (as Config.CacheDir; empty: none): a process that starts per
// call, as the command, reads the verifier's compiled code instead of
// compiling it.
func NewVerifierWithCache(ctx context.Context, component []byte, cacheDir string) (*Verifier, error) {
	core, err := CoreModule(component)
	if err != nil {
		return nil, fmt.Errorf("verifier: %w", err)
	}
	mods, ok := metered(core)
	return withCache(ctx, cacheDir, func(cache wazero.CompilationCache) (*Verifier, error) {
		rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(verifierMemoryMiB, cache, ok))
		var compiled wazero.CompiledModule
		err := error(nil)
		if ok {
			err = defineFuel(ctx, rt)
		}
		if err == nil {
			compiled, err = rt.CompileModule(ctx, mods[0])
		}
		if err == nil && importsAny(compiled, ok) {
			err = errors.New("the verifier must import nothing")
		}
		if err != nil {
			rt.Close(ctx)
			return nil, fmt.Errorf("verifier: %w", err)
		}
		return &Verifier{rt: rt, compiled: compiled, cache: cache}, nil
	})
}

// Close releases the verifier, after the call in progress if any.
func (v *Verifier) Close(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	err := v.rt.Close(ctx)
	if v.cache != nil {
		v.cache.Close(ctx)
	}
	return err
}

// call runs export `name` with byte strings as its (pointer, length)
// arguments and returns the string its return area holds at offset `at`
// (ok false: an option's none, the byte before it 0).
func (v *Verifier) call(ctx context.Context, name string, option bool, args ...[]byte) (out string, ok bool, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, verifierTimeout)
	defer cancel()
	if v.mod == nil {
		if v.mod, err = v.rt.InstantiateModule(withMemory(ctx), v.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions()); err != nil {
			v.mod = nil
			return "", false, fmt.Errorf("verifier: %w", err)
		}
	}
	out, ok, err = v.callLocked(ctx, name, option, args)
	if err != nil {
		v.mod.Close(ctx)
		v.mod = nil
		return "", false, fmt.Errorf("the pack verifier trapped: %w", err)
	}
	return out, ok, nil
}

func (v *Verifier) callLocked(ctx context.Context, name string, option bool, args [][]byte) (string, bool, error) {
	m := v.mod
	f := m.ExportedFunction(verifierI + "#" + name)
	if f == nil {
		return "", false, fmt.Errorf("no %s export", name)
	}
	var flat []uint64
	for _, b := range args {
		p, err := side(ctx, m).Alloc(1, uint32(len(b)))
		if err == nil && !m.Memory().Write(p, b) {
			err = errors.New("argument out of bounds")
		}
		if err != nil {
			return "", false, err
		}
		flat = append(flat, uint64(p), uint64(len(b)))
	}
	r, err := f.Call(ctx, flat...)
	if err != nil {
		return "", false, err
	}
	ret, at := uint32(r[0]), uint32(0)
	some := true
	if option {
		// option<string>: a byte (0 none, 1 some), the string at offset 4.
		d, okd := m.Memory().ReadByte(ret)
		if !okd || d > 1 {
			return "", false, errors.New("bad option")
		}
		some, at = d == 1, 4
	}
	var out string
	if some {
		p, ok1 := m.Memory().ReadUint32Le(ret + at)
		n, ok2 := m.Memory().ReadUint32Le(ret + at + 4)
		b, ok3 := m.Memory().Read(p, n)
		if !ok1 || !ok2 || !ok3 {
			return "", false, errors.New("result out of bounds")
		}
		out = string(b) // copies
	}
	if post := m.ExportedFunction("cabi_post_" + verifierI + "#" + name); post != nil {
		if _, err := post.Call(ctx, r[0]); err != nil {
			return "", false, err
		}
	}
	return out, some, nil
}

type verifyRequest struct {
	TrustedKeys   []string `json:"trusted_keys"`
	AllowUnsigned bool     `json:"allow_unsigned"`
	Tenant        *string  `json:"tenant"`
	Now           int64    `json:"now_unix_seconds"`
}

type verifyAnswer struct {
	Ok *struct {
		Manifest PackManifest    `json:"manifest"`
		Signed   *SignedManifest `json:"signed"`
	} `json:"Ok"`
	Err *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"Err"`
}

func (v *Verifier) answer(ctx context.Context, pack []byte, request any) (*Verified, error) {
	req, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	out, _, err := v.call(ctx, "verify-json", false, pack, req)
	if err != nil {
		return nil, err
	}
	var a verifyAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil || (a.Ok == nil) == (a.Err == nil) {
		return nil, errors.New("the pack verifier returned a bad answer")
	}
	if a.Err != nil {
		return nil, &PackRefusedError{Kind: a.Err.Kind, Message: a.Err.Message}
	}
	return &Verified{Manifest: a.Ok.Manifest, Signed: a.Ok.Signed}, nil
}

// Verify checks a pack component's bytes under trust, before anything is
// compiled. Errors are *PackRefusedError (a refusal) or a plain error (the
// verifier itself failed).
func (v *Verifier) Verify(ctx context.Context, pack []byte, trust Trust) (*Verified, error) {
	if len(pack) > PackBytesLimit {
		return nil, fmt.Errorf("rule pack: a pack file of %d bytes is over the limit of %d", len(pack), PackBytesLimit)
	}
	now := trust.Now
	if now.IsZero() {
		now = time.Now()
	}
	q := verifyRequest{AllowUnsigned: trust.AllowUnsigned, Now: max(now.Unix(), 0), TrustedKeys: []string{}}
	for _, k := range trust.Keys {
		q.TrustedKeys = append(q.TrustedKeys, k.text)
	}
	if !trust.AnyTenant {
		q.Tenant = &trust.Tenant
	}
	return v.answer(ctx, pack, q)
}

// CheckManifest is what the unverified path checks (the operator's own
// packs, development): a readable manifest, for this WIT version.
func (v *Verifier) CheckManifest(ctx context.Context, pack []byte) (PackManifest, error) {
	if len(pack) > PackBytesLimit {
		return PackManifest{}, fmt.Errorf("rule pack: a pack file of %d bytes is over the limit of %d", len(pack), PackBytesLimit)
	}
	r, err := v.answer(ctx, pack, map[string]bool{"manifest_only": true})
	if err != nil {
		return PackManifest{}, err
	}
	return r.Manifest, nil
}

var errKeyFile = errors.New("not a result-sanitizer public key file")

// ParsePublicKey reads a `.pub` file's text
// (`result-sanitizer-ed25519-public <64 hex>`). The error never repeats it.
func (v *Verifier) ParsePublicKey(ctx context.Context, text string) (PublicKey, error) {
	id, ok, err := v.call(ctx, "key-id", true, []byte(text))
	if err != nil {
		return PublicKey{}, err
	}
	if !ok {
		return PublicKey{}, errKeyFile
	}
	return PublicKey{id: id, text: text}, nil
}

// ReadPublicKey reads a `.pub` file; the error names the file only.
func (v *Verifier) ReadPublicKey(ctx context.Context, path string) (PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PublicKey{}, err
	}
	k, err := v.ParsePublicKey(ctx, string(b))
	if errors.Is(err, errKeyFile) {
		return PublicKey{}, fmt.Errorf("%s is not a public key file", path)
	}
	return k, err
}
