package resultsanitizer

// The shared signature test packs (target/test-packs, written by `make
// test-packs` with the Rust CLI): every case is refused with the kind the
// Rust and JS hosts give, before anything is compiled; the good pack loads
// and redacts.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type packCases struct {
	Tenant      string   `json:"tenant"`
	TrustedKeys []string `json:"trusted_keys"`
	Probe       struct {
		Input  string `json:"input"`
		Output string `json:"output"`
	} `json:"probe"`
	Cases []struct {
		File          string `json:"file"`
		AllowUnsigned bool   `json:"allow_unsigned"`
		Expect        string `json:"expect"`
	} `json:"cases"`
	Floor struct {
		Input string `json:"input"`
		Packs []struct {
			File    string   `json:"file"`
			Output  string   `json:"output"`
			Relaxed []string `json:"relaxed"`
		} `json:"packs"`
	} `json:"floor"`
}

var packDir = filepath.Join(root, "target", "test-packs")

// One verifier for the whole test process, as a host would share one.
var (
	verifierOnce   sync.Once
	sharedVerifier *Verifier
)

func testVerifier(t *testing.T) *Verifier {
	t.Helper()
	verifierOnce.Do(func() {
		v, err := NewVerifier(context.Background(), component(t, "verifier.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		sharedVerifier = v
	})
	if sharedVerifier == nil {
		t.Fatal("no verifier")
	}
	return sharedVerifier
}

func TestNewNeedsAVerifier(t *testing.T) {
	ctx := context.Background()
	for _, f := range []func(context.Context, []byte, []byte, Config) (*Sanitizer, error){New, NewUnverified} {
		if _, err := f(ctx, nil, testPack(t, "good.wasm"), Config{Verifier: nil, Trust: Trust{AllowUnsigned: true}}); err == nil || !strings.Contains(err.Error(), "Config.Verifier") {
			t.Errorf("%v", err)
		}
	}
}

// A refusal reads as the Rust host words it: one sentence in every host.
func TestRefusalsAreWordedAsInTheRustHost(t *testing.T) {
	_, err := testVerifier(t).Verify(context.Background(), testPack(t, "unsigned.wasm"), Trust{})
	if err == nil || err.Error() != "pack refused: unsigned (pass --allow-unsigned for development only)" {
		t.Errorf("%v", err)
	}
}

func loadCases(t *testing.T) (packCases, []PublicKey) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(packDir, "cases.json"))
	if err != nil {
		t.Fatalf("%v (run `make test-packs` first)", err)
	}
	var c packCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var keys []PublicKey
	for _, f := range c.TrustedKeys {
		k, err := testVerifier(t).ReadPublicKey(context.Background(), filepath.Join(packDir, f))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return c, keys
}

func testPack(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(packDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func outcome(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return "ok"
	}
	var r *PackRefusedError
	if !errors.As(err, &r) {
		t.Fatalf("not a PackRefusedError: %v", err)
	}
	return r.Kind
}

func TestSharedPackCasesMatchTheRustHost(t *testing.T) {
	c, keys := loadCases(t)
	if len(c.Cases) < 10 {
		t.Fatalf("only %d cases", len(c.Cases))
	}
	for _, tc := range c.Cases {
		_, err := testVerifier(t).Verify(context.Background(), testPack(t, tc.File), Trust{Keys: keys, AllowUnsigned: tc.AllowUnsigned, Tenant: c.Tenant})
		if got := outcome(t, err); got != tc.Expect {
			t.Errorf("%s (unsigned allowed: %v): got %s, want %s (%v)", tc.File, tc.AllowUnsigned, got, tc.Expect, err)
		}
	}
}

func TestNewVerifiesBeforeCompiling(t *testing.T) {
	c, keys := loadCases(t)
	ctx := context.Background()
	pipe := component(t, "pipeline.wasm")
	trust := Trust{Keys: keys, Tenant: c.Tenant}
	for _, tc := range c.Cases {
		if tc.Expect == "ok" {
			continue
		}
		// A pipeline that is not wasm: only a refusal before any
		// compiling gives the pack's refusal rather than a compile error.
		_, err := New(ctx, []byte("not wasm"), testPack(t, tc.File), Config{Verifier: testVerifier(t), Trust: Trust{Keys: keys, AllowUnsigned: tc.AllowUnsigned, Tenant: c.Tenant}})
		if got := outcome(t, err); got != tc.Expect {
			t.Errorf("New with %s: got %s, want %s", tc.File, got, tc.Expect)
		}
	}
	// Unsigned is refused unless allowed; signed, unless its key is trusted.
	if _, err := New(ctx, pipe, testPack(t, "unsigned.wasm"), Config{Verifier: testVerifier(t)}); outcome(t, err) != RefusedUnsigned {
		t.Errorf("an unsigned pack by default: %v", err)
	}
	if _, err := New(ctx, pipe, testPack(t, "good.wasm"), Config{Verifier: testVerifier(t)}); outcome(t, err) != RefusedUntrustedKey {
		t.Errorf("a signed pack, no key trusted: %v", err)
	}
	// A tenant's pack is never the whole policy: New needs the platform's.
	if _, err := New(ctx, pipe, testPack(t, "good.wasm"), Config{Verifier: testVerifier(t), Trust: trust}); err == nil || !strings.Contains(err.Error(), "Config.PlatformPack") {
		t.Errorf("New without a platform pack: %v", err)
	}
	s, err := New(ctx, pipe, testPack(t, "good.wasm"), Config{Verifier: testVerifier(t), Trust: trust, PlatformPack: component(t, "default-pack.wasm")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	out, err := s.Sanitize(ctx, []byte(c.Probe.Input), map[string]any{"tool": "t"})
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal([]byte(out.Message), &msg); err != nil || len(msg.Content) == 0 || msg.Content[0].Text != c.Probe.Output {
		t.Errorf("the good pack gave %s", out.Message)
	}
}

func TestNewUnverifiedServesTheBuiltInPack(t *testing.T) {
	ctx := context.Background()
	s, err := NewUnverified(ctx, component(t, "pipeline.wasm"), component(t, "default-pack.wasm"), Config{Verifier: testVerifier(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	out, err := s.Sanitize(ctx, []byte("DB_PASSWORD=Xk9mQ2vLp7zz"), map[string]any{"tool": "t"})
	if err != nil || !strings.Contains(out.Message, "[REDACTED:") {
		t.Fatalf("%v %v", out, err)
	}
	// Still no pack of another WIT.
	if _, err := NewUnverified(ctx, component(t, "pipeline.wasm"), testPack(t, "wrong-wit.wasm"), Config{Verifier: testVerifier(t)}); outcome(t, err) != RefusedIncompatibleWIT {
		t.Errorf("wrong WIT unverified: %v", err)
	}
}

func TestExpiryScopeAndRotation(t *testing.T) {
	c, keys := loadCases(t)
	exp := testPack(t, "expired.wasm")
	before := time.Date(2019, 12, 31, 23, 59, 59, 0, time.UTC)
	if _, err := testVerifier(t).Verify(context.Background(), exp, Trust{Keys: keys, Tenant: c.Tenant, Now: before}); err != nil {
		t.Errorf("before its expiry: %v", err)
	}
	other := testPack(t, "other-tenant.wasm")
	if _, err := testVerifier(t).Verify(context.Background(), other, Trust{Keys: keys, AnyTenant: true}); err != nil {
		t.Errorf("any tenant asked for, any scope passes: %v", err)
	}
	u, err := testVerifier(t).ReadPublicKey(context.Background(), filepath.Join(packDir, "untrusted.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testVerifier(t).Verify(context.Background(), testPack(t, "untrusted-key.wasm"), Trust{Keys: append(keys, u), Tenant: c.Tenant}); err != nil {
		t.Errorf("with its key listed too: %v", err)
	}
}

func TestKeyFilesAndTheirErrors(t *testing.T) {
	_, keys := loadCases(t)
	text := string(testPack(t, "trusted.pub"))
	tag, hexKey, _ := strings.Cut(strings.TrimSpace(text), " ")
	k, err := testVerifier(t).ParsePublicKey(context.Background(), text)
	if err != nil || k.KeyID() != keys[0].KeyID() || len(k.KeyID()) != 16 {
		t.Fatalf("%v %v", k.KeyID(), err)
	}
	// 02 00…: a y with no x on the curve (the Rust CLI refuses this file too).
	offCurve := tag + " 02" + strings.Repeat("00", 31)
	for _, bad := range []string{hexKey, tag + " " + strings.ToUpper(hexKey), tag + " " + hexKey[2:], "result-sanitizer-ed25519-secret " + hexKey, offCurve} {
		if _, err := testVerifier(t).ParsePublicKey(context.Background(), bad); err == nil || strings.Contains(err.Error(), hexKey[:16]) {
			t.Errorf("accepted, or repeated the key: %v", err)
		}
	}
	secret := strings.Fields(string(testPack(t, "trusted.key")))[1]
	_, err = testVerifier(t).ReadPublicKey(context.Background(), filepath.Join(packDir, "trusted.key"))
	if err == nil || !strings.Contains(err.Error(), "trusted.key is not a public key file") || strings.Contains(err.Error(), secret[:16]) {
		t.Errorf("secret key file: %v", err)
	}
}

func TestEveryFlippedByteOfASignedPackIsRefused(t *testing.T) {
	c, keys := loadCases(t)
	good := testPack(t, "good.wasm")
	trust := Trust{Keys: keys, Tenant: c.Tenant}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		if _, err := testVerifier(t).Verify(context.Background(), b, trust); err == nil {
			t.Fatalf("byte %d flipped: accepted", i)
		}
	}
	for _, cut := range []int{1, 10, 100, len(good) / 2} {
		if _, err := testVerifier(t).Verify(context.Background(), good[:len(good)-cut], trust); err == nil {
			t.Errorf("%d bytes cut: accepted", cut)
		}
	}
}

func TestTheCommandTakesTheRustCLIsTrustFlags(t *testing.T) {
	c, _ := loadCases(t)
	bin := buildCommand(t)
	p := func(f string) string { return filepath.Join("target", "test-packs", f) }
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Stdin = strings.NewReader(c.Probe.Input)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, stderr, err := run("--pack", p("good.wasm"), "--trusted-key", p("untrusted.pub"), "--trusted-key", p("trusted.pub"), "--tenant", c.Tenant)
	if err != nil || !strings.Contains(out, c.Probe.Output) {
		t.Errorf("good pack: %v %s %s", err, out, stderr)
	}
	if _, stderr, err := run("--pack", p("unsigned.wasm")); err == nil || !strings.Contains(stderr, "pack refused: unsigned") {
		t.Errorf("unsigned: %v %s", err, stderr)
	}
	if out, _, err := run("--pack", p("unsigned.wasm"), "--allow-unsigned"); err != nil || !strings.Contains(out, c.Probe.Output) {
		t.Errorf("unsigned, allowed: %v %s", err, out)
	}
	if _, stderr, err := run("--pack", p("other-tenant.wasm"), "--trusted-key", p("trusted.pub"), "--tenant", c.Tenant); err == nil || !strings.Contains(stderr, "pack refused: scoped to tenant") {
		t.Errorf("other tenant: %v %s", err, stderr)
	}
	// The default pack needs no key.
	if out, stderr, err := run(); err != nil || !strings.Contains(out, "content") {
		t.Errorf("default pack: %v %s", err, stderr)
	}
}

func TestAPackFileOver16MiBIsRefusedFirst(t *testing.T) {
	big := make([]byte, PackBytesLimit+1)
	for _, f := range []func(context.Context, []byte, []byte, Config) (*Sanitizer, error){New, NewUnverified} {
		if _, err := f(context.Background(), nil, big, Config{Verifier: testVerifier(t), Trust: Trust{AllowUnsigned: true}}); err == nil || !strings.Contains(err.Error(), "over the limit") {
			t.Errorf("%v", err)
		}
	}
}

// The platform's floor under a tenant's pack, with and without a grant,
// gives what cases.json says, as in the Rust and JS hosts.
func TestThePlatformFloorAndAGrantAsInEveryHost(t *testing.T) {
	c, keys := loadCases(t)
	ctx := context.Background()
	if len(c.Floor.Packs) < 2 {
		t.Fatalf("%d floor cases", len(c.Floor.Packs))
	}
	for _, fc := range c.Floor.Packs {
		cfg := Config{Verifier: testVerifier(t), Trust: Trust{Keys: keys, Tenant: c.Tenant}, PlatformPack: component(t, "default-pack.wasm")}
		s, err := New(ctx, component(t, "pipeline.wasm"), testPack(t, fc.File), cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Sanitize(ctx, []byte(c.Floor.Input), map[string]any{"tool": "t"})
		s.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Content []struct{ Text string } `json:"content"`
			Meta    map[string]struct {
				Relaxed      []string `json:"relaxed"`
				PlatformName string   `json:"platform_name"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal([]byte(out.Message), &msg); err != nil || len(msg.Content) == 0 {
			t.Fatalf("%s: %v", fc.File, err)
		}
		rec := msg.Meta["result-sanitizer/record"]
		if msg.Content[0].Text != fc.Output || strings.Join(rec.Relaxed, ",") != strings.Join(fc.Relaxed, ",") || rec.PlatformName != "default" {
			t.Errorf("%s: got %q relaxed %v platform %q", fc.File, msg.Content[0].Text, rec.Relaxed, rec.PlatformName)
		}
	}
}

// An empty tenant (a request without its tenant header, say) is no tenant:
// only an unscoped pack passes, as in the Rust and JS hosts; any scope
// passes only when asked for.
func TestAnEmptyTenantIsNotAnyTenant(t *testing.T) {
	c, keys := loadCases(t)
	good := testPack(t, "good.wasm")
	if _, err := testVerifier(t).Verify(context.Background(), good, Trust{Keys: keys, Tenant: c.Tenant}); err != nil {
		t.Fatal(err)
	}
	if _, err := testVerifier(t).Verify(context.Background(), good, Trust{Keys: keys}); outcome(t, err) != RefusedWrongTenant {
		t.Errorf("a pack scoped to %s, no tenant: %v", c.Tenant, err)
	}
	if _, err := testVerifier(t).Verify(context.Background(), good, Trust{Keys: keys, AnyTenant: true}); err != nil {
		t.Errorf("AnyTenant: %v", err)
	}
}
