package resultsanitizer

// Signed packs, checked as the Rust host checks them (host/src/signing.rs).
//
// A signed pack carries its signature as its last top-level custom section,
// `result-sanitizer:signature`: JSON {"v", "manifest", "signature"}. The
// signature is Ed25519 over "result-sanitizer pack signature v1\n" and the
// manifest as serde_json writes it; the manifest holds the sha256 of every
// byte before that section. VerifyPack reads bytes and JSON only: nothing
// is compiled before a pack passes. The checks, their order and the
// refusal kinds are the Rust host's, so every host refuses a pack the same
// way.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	signatureSection = "result-sanitizer:signature"
	manifestSection  = "result-sanitizer:manifest"
	signContext      = "result-sanitizer pack signature v1\n"
	pubTag           = "result-sanitizer-ed25519-public"
	// WITVersion is the WIT version this host speaks (its interface names carry it).
	WITVersion = "0.1.0"
	// PackBytesLimit: a larger pack file is refused before it is parsed
	// (the Rust host's pack_bytes).
	PackBytesLimit = 16 << 20
)

// Refusal kinds: the Rust host's Refusal variants in snake_case, spelled
// alike in the JS host's PackRefusedError.code.
const (
	RefusedMalformed       = "malformed"
	RefusedUnsigned        = "unsigned"
	RefusedIncompatibleWIT = "incompatible_wit"
	RefusedUntrustedKey    = "untrusted_key"
	RefusedTampered        = "tampered"
	RefusedExpired         = "expired"
	RefusedWrongTenant     = "wrong_tenant"
)

// PackRefusedError: a pack was refused before anything was compiled. Kind
// is one of the Refused* constants.
type PackRefusedError struct{ Kind, Reason string }

func (e *PackRefusedError) Error() string { return "pack refused: " + e.Kind + ": " + e.Reason }

func refuse(kind, format string, a ...any) error {
	return &PackRefusedError{Kind: kind, Reason: fmt.Sprintf(format, a...)}
}

// PublicKey is a key trusted to sign packs.
type PublicKey struct {
	id  string
	key ed25519.PublicKey
}

// KeyID is the first 16 hex digits of sha256 of the key, as in signatures.
func (k PublicKey) KeyID() string { return k.id }

// rustTrim is Rust's str::trim: Unicode White_Space at both ends.
func rustTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
			return true
		}
		return (r >= '\t' && r <= '\r') || r == ' ' || (r >= 0x2000 && r <= 0x200a)
	})
}

// unhex decodes exactly n bytes of lower-case hex: one encoding per key or
// signature, so no byte of a signed pack can change unnoticed.
func unhex(s string, n int) []byte {
	s = rustTrim(s)
	if len(s) != 2*n || strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') }) >= 0 {
		return nil
	}
	b, _ := hex.DecodeString(s)
	return b
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

var errKeyFile = errors.New("not a result-sanitizer public key file")

var (
	curveP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	curveD = func() *big.Int {
		inv := new(big.Int).ModInverse(big.NewInt(121666), curveP)
		return new(big.Int).Mod(new(big.Int).Mul(big.NewInt(-121665), inv), curveP)
	}()
)

// isPoint reports whether 32 bytes decompress to an Edwards point, as the
// Rust host's key parser (ed25519-dalek) asks: x² = (y² - 1) / (d·y² + 1)
// has a root. crypto/ed25519 takes any 32 bytes as a key, and then
// verifies nothing.
func isPoint(raw []byte) bool {
	le := slices.Clone(raw)
	le[31] &= 0x7f
	slices.Reverse(le)
	y := new(big.Int).SetBytes(le)
	y2 := new(big.Int).Mul(y, y)
	u := new(big.Int).Mod(new(big.Int).Sub(y2, big.NewInt(1)), curveP)
	v := new(big.Int).Mod(new(big.Int).Add(new(big.Int).Mul(curveD, y2), big.NewInt(1)), curveP)
	w := new(big.Int).Mod(new(big.Int).Mul(u, new(big.Int).ModInverse(v, curveP)), curveP)
	half := new(big.Int).Rsh(new(big.Int).Sub(curveP, big.NewInt(1)), 1)
	return w.Sign() == 0 || new(big.Int).Exp(w, half, curveP).Cmp(big.NewInt(1)) == 0
}

// ParsePublicKey reads a `.pub` file's text
// (`result-sanitizer-ed25519-public <64 hex>`). The error never repeats it.
func ParsePublicKey(text string) (PublicKey, error) {
	tag, body, ok := strings.Cut(rustTrim(text), " ")
	if !ok || tag != pubTag {
		return PublicKey{}, errKeyFile
	}
	raw := unhex(body, ed25519.PublicKeySize)
	if raw == nil || !isPoint(raw) {
		return PublicKey{}, errKeyFile
	}
	return PublicKey{id: sha256Hex(raw)[:16], key: ed25519.PublicKey(raw)}, nil
}

// ReadPublicKey reads a `.pub` file; the error names the file only.
func ReadPublicKey(path string) (PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PublicKey{}, err
	}
	k, err := ParsePublicKey(string(b))
	if err != nil {
		return PublicKey{}, fmt.Errorf("%s is not a public key file", path)
	}
	return k, nil
}

// Trust is what a host requires of a pack.
type Trust struct {
	// Keys trusted to sign packs (several at once, for rotation).
	Keys []PublicKey
	// AllowUnsigned accepts unsigned packs (development only).
	AllowUnsigned bool
	// Tenant is the tenant the pack serves: a pack scoped to another
	// tenant is refused; empty: only an unscoped (`*`) pack passes.
	Tenant string
	// AnyTenant lets a pack of any scope pass (the Rust host's `None`,
	// the JS host's omitted tenant): for a process that serves whichever
	// tenant its one pack names. A missing tenant (a request without its
	// header) must not mean "any".
	AnyTenant bool
	// Now is the time expiry is checked against; zero: time.Now().
	Now time.Time
}

// PackManifest is a pack's own manifest (its result-sanitizer:manifest
// section).
type PackManifest struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Tenant     string   `json:"tenant"`
	WITVersion string   `json:"wit_version"`
	RuleIDs    []string `json:"rule_ids"`
	HasDetect  bool     `json:"has_detect"`
}

// SignedManifest is what a signature covers besides the bytes.
type SignedManifest struct {
	Name       string
	Version    string
	Tenant     string
	WITVersion string
	Expires    *string
	KeyID      string
	SHA256     string
	// MayRelax: platform rules the pack may turn off; written to the
	// signed message only when non-empty (as serde skips it).
	MayRelax []string
}

// Verified is a pack that passed: its manifest, and the signed manifest
// (nil when unsigned and allowed).
type Verified struct {
	Manifest PackManifest
	Signed   *SignedManifest
}

type section struct {
	start, data, end int
	custom           bool
	name             string
}

// u32 reads an unsigned LEB128 u32 at i as wasmparser does: (value, next).
func u32(b []byte, i int) (int, int, bool) {
	v := 0
	for k := 0; k < 5; k++ {
		if i+k >= len(b) {
			return 0, 0, false
		}
		x := b[i+k]
		if k == 4 && x > 0x0f {
			return 0, 0, false
		}
		v |= int(x&0x7f) << (7 * k)
		if x&0x80 == 0 {
			return v, i + k + 1, true
		}
	}
	return 0, 0, false
}

// sections lists a component's top-level sections. Only headers are read:
// a section's contents are skipped by its size.
func sections(b []byte) ([]section, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, refuse(RefusedMalformed, "not a valid wasm binary")
	}
	switch string(b[4:8]) {
	case "\x0d\x00\x01\x00":
	case "\x01\x00\x00\x00":
		return nil, refuse(RefusedMalformed, "a core module, not a component")
	default:
		return nil, refuse(RefusedMalformed, "not a valid wasm binary: unknown version")
	}
	var out []section
	for i := 8; i < len(b); {
		id := b[i]
		// Component section ids: 0 custom .. 11 export.
		if id > 11 {
			return nil, refuse(RefusedMalformed, "not a valid wasm binary: unknown section %d", id)
		}
		size, body, ok := u32(b, i+1)
		if !ok || body+size > len(b) {
			return nil, refuse(RefusedMalformed, "not a valid wasm binary: section past the end")
		}
		s := section{start: i, data: body, end: body + size}
		if id == 0 {
			n, at, ok := u32(b, body)
			if !ok || at+n > s.end {
				return nil, refuse(RefusedMalformed, "not a valid wasm binary: bad custom section")
			}
			if !utf8.Valid(b[at : at+n]) {
				return nil, refuse(RefusedMalformed, "not a valid wasm binary: custom section name is not UTF-8")
			}
			s.custom, s.name, s.data = true, string(b[at:at+n]), at+n
		}
		out = append(out, s)
		i = s.end
	}
	return out, nil
}

// jsonObject splits one JSON object into its members as serde_json reads
// a struct with the fields `known`: valid UTF-8, no lone surrogate
// escapes, no known field twice, nothing after it. encoding/json alone
// would take the last of two keys and turn bad text into U+FFFD.
func jsonObject(b []byte, known ...string) (map[string]json.RawMessage, error) {
	if !utf8.Valid(b) || loneSurrogate(b) {
		return nil, errors.New("not UTF-8")
	}
	if nestsDeeperThan(b, maxDepth) {
		return nil, errors.New("nested too deep")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	out := map[string]json.RawMessage{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		if _, dup := out[k]; dup && slices.Contains(known, k) {
			return nil, fmt.Errorf("duplicate field %q", k)
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing characters")
	}
	return out, nil
}

// maxDepth is the deepest nesting a manifest may have (pack-format's
// MAX_DEPTH): serde_json skips an unknown field at any depth and
// encoding/json stops at 10 000, so every host checks this one bound.
const maxDepth = 128

// nestsDeeperThan reports JSON text nesting arrays and objects more than
// max deep (brackets inside strings do not count).
func nestsDeeperThan(b []byte, max int) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range b {
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// loneSurrogate reports a \uD800-\uDFFF escape not in a high-low pair
// (serde_json refuses one; encoding/json would decode it as U+FFFD).
func loneSurrogate(b []byte) bool {
	esc := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := esc(i)
		if !ok {
			i++ // another escape: skip its character (e.g. \\)
			continue
		}
		if r >= 0xd800 && r < 0xdc00 {
			if lo, ok := esc(i + 6); ok && lo >= 0xdc00 && lo < 0xe000 {
				i += 11
				continue
			}
			return true
		}
		if r >= 0xdc00 && r < 0xe000 {
			return true
		}
		i += 5
	}
	return false
}

// field decodes member k of o into v; required members may not be
// missing or null (serde's String), optional ones may.
func field(o map[string]json.RawMessage, k string, v any, required bool) bool {
	raw, ok := o[k]
	if !ok || string(raw) == "null" {
		return !required
	}
	return json.Unmarshal(raw, v) == nil
}

func knownFields(o map[string]json.RawMessage, names []string) bool {
	for k := range o {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return true
}

var (
	sectionFields  = []string{"v", "manifest", "signature"}
	signedFields   = []string{"name", "version", "tenant", "wit_version", "expires", "key_id", "sha256", "may_relax"}
	manifestFields = []string{"name", "version", "tenant", "wit_version", "rule_ids", "has_detect"}
)

// parseSignature reads the signature section as serde reads its
// deny_unknown_fields structs.
func parseSignature(b []byte) (*SignedManifest, string, error) {
	bad := refuse(RefusedTampered, "signature section is not valid JSON")
	o, err := jsonObject(b, sectionFields...)
	if err != nil || !knownFields(o, sectionFields) {
		return nil, "", bad
	}
	var v uint32
	var sig string
	if !field(o, "v", &v, true) || !field(o, "signature", &sig, true) {
		return nil, "", bad
	}
	// The format number is not signed: any other value is a changed byte.
	if v != 1 {
		return nil, "", refuse(RefusedTampered, "unknown signature format")
	}
	mo, err := jsonObject(o["manifest"], signedFields...)
	if err != nil || !knownFields(mo, signedFields) {
		return nil, "", bad
	}
	var m SignedManifest
	ok := field(mo, "name", &m.Name, true) && field(mo, "version", &m.Version, true) &&
		field(mo, "tenant", &m.Tenant, true) && field(mo, "wit_version", &m.WITVersion, true) &&
		field(mo, "expires", &m.Expires, false) && field(mo, "key_id", &m.KeyID, true) &&
		field(mo, "sha256", &m.SHA256, true)
	// An absent may_relax is empty; a present one is a list (null is not).
	if raw, has := mo["may_relax"]; has && (string(raw) == "null" || json.Unmarshal(raw, &m.MayRelax) != nil) {
		ok = false
	}
	if !ok {
		return nil, "", bad
	}
	return &m, sig, nil
}

// serdeString writes s as serde_json does: only ", \ and the controls are
// escaped (\b \t \n \f \r, others \u00xx in lower case). encoding/json also
// escapes <, >, &, U+2028 and U+2029, which would change the message.
func serdeString(w *bytes.Buffer, s string) {
	const hexd = "0123456789abcdef"
	w.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			w.WriteString(`\"`)
		case c == '\\':
			w.WriteString(`\\`)
		case c == '\b':
			w.WriteString(`\b`)
		case c == '\t':
			w.WriteString(`\t`)
		case c == '\n':
			w.WriteString(`\n`)
		case c == '\f':
			w.WriteString(`\f`)
		case c == '\r':
			w.WriteString(`\r`)
		case c < 0x20:
			w.WriteString(`\u00`)
			w.WriteByte(hexd[c>>4])
			w.WriteByte(hexd[c&15])
		default:
			w.WriteByte(c)
		}
	}
	w.WriteByte('"')
}

// message is the signed message: the context line, then the manifest as
// serde_json writes the Rust SignedManifest (compact, field order).
func (m *SignedManifest) message() []byte {
	var w bytes.Buffer
	w.WriteString(signContext)
	for i, f := range []struct {
		k string
		v *string
	}{{"name", &m.Name}, {"version", &m.Version}, {"tenant", &m.Tenant}, {"wit_version", &m.WITVersion}, {"expires", m.Expires}, {"key_id", &m.KeyID}, {"sha256", &m.SHA256}} {
		w.WriteByte("{,"[min(i, 1)])
		serdeString(&w, f.k)
		w.WriteByte(':')
		if f.v == nil {
			w.WriteString("null")
		} else {
			serdeString(&w, *f.v)
		}
	}
	if len(m.MayRelax) > 0 {
		w.WriteString(`,"may_relax":[`)
		for i, r := range m.MayRelax {
			if i > 0 {
				w.WriteByte(',')
			}
			serdeString(&w, r)
		}
		w.WriteByte(']')
	}
	w.WriteByte('}')
	return w.Bytes()
}

// section is the signature section as serde_json writes the Rust
// SignatureSection: format 1, the manifest, the signature.
func (m *SignedManifest) section(sig string) []byte {
	var w bytes.Buffer
	w.WriteString(`{"v":1,"manifest":`)
	w.Write(m.message()[len(signContext):])
	w.WriteString(`,"signature":`)
	serdeString(&w, sig)
	w.WriteByte('}')
	return w.Bytes()
}

// customSection is a custom section named name holding data, header
// included, in its one encoding (the shortest LEB128 for each length).
func customSection(name string, data []byte) []byte {
	body := binary.AppendUvarint(nil, uint64(len(name)))
	body = append(append(body, name...), data...)
	out := binary.AppendUvarint([]byte{0}, uint64(len(body)))
	return append(out, body...)
}

// readManifest reads the pack's own manifest among secs.
func readManifest(b []byte, secs []section) (PackManifest, error) {
	var found *section
	for i := range secs {
		if secs[i].custom && secs[i].name == manifestSection {
			if found != nil {
				return PackManifest{}, refuse(RefusedMalformed, "more than one %s section", manifestSection)
			}
			found = &secs[i]
		}
	}
	if found == nil {
		return PackManifest{}, refuse(RefusedMalformed, "no manifest section")
	}
	bad := refuse(RefusedMalformed, "manifest is not valid JSON")
	o, err := jsonObject(b[found.data:found.end], manifestFields...)
	if err != nil {
		return PackManifest{}, bad
	}
	var m PackManifest
	if !field(o, "name", &m.Name, true) || !field(o, "version", &m.Version, true) ||
		!field(o, "tenant", &m.Tenant, true) || !field(o, "wit_version", &m.WITVersion, true) ||
		!field(o, "rule_ids", &m.RuleIDs, true) || !field(o, "has_detect", &m.HasDetect, true) {
		return PackManifest{}, bad
	}
	return m, nil
}

// checkManifest is what the unverified path checks (as the Rust host's
// load_pack_unverified): a manifest, for this WIT version.
func checkManifest(pack []byte) error {
	secs, err := sections(pack)
	if err != nil {
		return err
	}
	m, err := readManifest(pack, secs)
	if err != nil {
		return err
	}
	if m.WITVersion != WITVersion {
		return refuse(RefusedIncompatibleWIT, "built for WIT %s, this host speaks %s", m.WITVersion, WITVersion)
	}
	return nil
}

// VerifyPack verifies a pack component's bytes under trust, in the Rust
// host's order. Errors are *PackRefusedError.
func VerifyPack(pack []byte, trust Trust) (*Verified, error) {
	secs, err := sections(pack)
	if err != nil {
		return nil, err
	}
	var sig *section
	for i := range secs {
		if secs[i].custom && secs[i].name == signatureSection {
			if sig != nil {
				return nil, refuse(RefusedTampered, "more than one signature section")
			}
			sig = &secs[i]
		}
	}
	signedRange, mine := pack, secs
	var signed *SignedManifest
	var sigHex string
	if sig != nil {
		if sig.end != len(pack) {
			return nil, refuse(RefusedTampered, "bytes follow the signature section")
		}
		if signed, sigHex, err = parseSignature(pack[sig.data:sig.end]); err != nil {
			return nil, err
		}
		// The section has one encoding, the one the Rust signer writes:
		// JSON that parses to the same manifest another way (`\u001F` for
		// `\u001f`, spaces) would be a changed byte that still verifies.
		// So has its header: a size or name length in more LEB128 bytes
		// than it needs would be another such byte.
		if !bytes.Equal(customSection(signatureSection, signed.section(sigHex)), pack[sig.start:sig.end]) {
			return nil, refuse(RefusedTampered, "signature section is not in its one encoding")
		}
		signedRange, mine = pack[:sig.start], secs[:len(secs)-1]
	}
	manifest, err := readManifest(pack, mine)
	if err != nil {
		return nil, err
	}
	scopeOK := func(scope string) error {
		if !trust.AnyTenant && scope != "*" && scope != trust.Tenant {
			return refuse(RefusedWrongTenant, "scoped to tenant `%s`, not `%s`", scope, trust.Tenant)
		}
		return nil
	}
	if signed == nil {
		if !trust.AllowUnsigned {
			return nil, refuse(RefusedUnsigned, "the pack is not signed (AllowUnsigned is for development only)")
		}
		if manifest.WITVersion != WITVersion {
			return nil, refuse(RefusedIncompatibleWIT, "built for WIT %s, this host speaks %s", manifest.WITVersion, WITVersion)
		}
		if err := scopeOK(manifest.Tenant); err != nil {
			return nil, err
		}
		return &Verified{Manifest: manifest}, nil
	}
	m := signed
	var key *PublicKey
	for i := range trust.Keys {
		if trust.Keys[i].id == m.KeyID {
			key = &trust.Keys[i]
			break
		}
	}
	if key == nil {
		return nil, refuse(RefusedUntrustedKey, "signed by untrusted key %s", m.KeyID)
	}
	sigBytes := unhex(sigHex, ed25519.SignatureSize)
	if sigBytes == nil {
		return nil, refuse(RefusedTampered, "signature is not 64 bytes of hex")
	}
	if !ed25519.Verify(key.key, m.message(), sigBytes) {
		return nil, refuse(RefusedTampered, "signature does not verify")
	}
	if sha256Hex(signedRange) != m.SHA256 {
		return nil, refuse(RefusedTampered, "wasm bytes changed after signing")
	}
	if manifest.Name != m.Name || manifest.Version != m.Version || manifest.Tenant != m.Tenant || manifest.WITVersion != m.WITVersion {
		return nil, refuse(RefusedTampered, "pack manifest differs from the signed manifest")
	}
	if m.Expires != nil {
		t, ok := parseRFC3339Weak(*m.Expires)
		if !ok {
			return nil, refuse(RefusedTampered, "unreadable expiry")
		}
		now := trust.Now
		if now.IsZero() {
			now = time.Now()
		}
		if !now.Before(t) {
			return nil, refuse(RefusedExpired, "expired at %s", *m.Expires)
		}
	}
	if m.WITVersion != WITVersion {
		return nil, refuse(RefusedIncompatibleWIT, "built for WIT %s, this host speaks %s", m.WITVersion, WITVersion)
	}
	if err := scopeOK(m.Tenant); err != nil {
		return nil, err
	}
	return &Verified{Manifest: manifest, Signed: m}, nil
}

// parseRFC3339Weak reads a time as humantime's parse_rfc3339_weak does
// (the Rust host's parser, quirks included, so that every host reads an
// expiry alike).
func parseRFC3339Weak(s string) (time.Time, bool) {
	b := []byte(s)
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	bad := false
	d2 := func(i int) int {
		if b[i] < '0' || b[i] > '9' || b[i+1] < '0' || b[i+1] > '9' {
			bad = true
		}
		return int(b[i]-'0')*10 + int(b[i+1]-'0')
	}
	year := d2(0)*100 + d2(2)
	month, day, hour, minute, second := d2(5), d2(8), d2(11), d2(14), d2(17)
	if bad || year < 1970 || hour > 23 || minute > 59 || second > 60 {
		return time.Time{}, false
	}
	if second == 60 {
		second = 59
	}
	leap := year%4 == 0 && (year%100 != 0 || year%400 == 0)
	mdays := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if leap {
		mdays[1] = 29
	}
	if month < 1 || month > 12 || day == 0 || day > mdays[month-1] {
		return time.Time{}, false
	}
	ydays := day - 1
	for _, d := range mdays[:month-1] {
		ydays += d
	}
	y1 := year - 1
	days := (year-1970)*365 + (y1-1968)/4 - (y1-1900)/100 + (y1-1600)/400 + ydays
	nanos, mult := 0, 100_000_000
	if len(b) > 19 && b[19] == '.' {
		for i := 20; i < len(b); i++ {
			if b[i] == 'Z' {
				if i == len(b)-1 {
					break
				}
				return time.Time{}, false
			} else if b[i] == '+' {
				if i == len(b)-6 {
					break
				}
				return time.Time{}, false
			}
			if b[i] < '0' || b[i] > '9' {
				return time.Time{}, false
			}
			nanos += mult * int(b[i]-'0')
			mult /= 10
		}
	} else if len(b) != 19 && (len(b) > 25 || (b[19] != 'Z' && string(b[19:]) != "+00:00")) {
		return time.Time{}, false
	}
	total := int64(second+minute*60+hour*3600) + int64(days)*86400
	if total > 253_402_300_799 {
		return time.Time{}, false
	}
	return time.Unix(total, int64(nanos)), true
}
