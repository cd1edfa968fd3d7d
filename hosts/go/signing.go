package resultsanitizer

// The types of signed packs. The checks themselves are the verifier
// component's (verifier.go): a pack's signature is its last top-level
// custom section, `result-sanitizer:signature`, Ed25519 over a manifest
// that holds the sha256 of every byte before it (docs/rule-packs.md).

import "time"

const (
	// WITVersion is the WIT version this host speaks (its interface names carry it).
	WITVersion = "0.1.0"
	// PackBytesLimit: a larger pack file is refused before it is parsed
	// (the Rust host's pack_bytes).
	PackBytesLimit = 16 << 20
)

// Refusal kinds: the verifier's `refusal` cases in snake_case, spelled
// alike in the JS and Python hosts.
const (
	RefusedMalformed         = "malformed"
	RefusedUnsigned          = "unsigned"
	RefusedIncompatibleWIT   = "incompatible_wit"
	RefusedUntrustedKey      = "untrusted_key"
	RefusedTampered          = "tampered"
	RefusedExpired           = "expired"
	RefusedWrongTenant       = "wrong_tenant"
	RefusedInvalidTrustedKey = "invalid_trusted_key"
)

// PackRefusedError: a pack was refused before anything was compiled. Kind
// is one of the Refused* constants; Message is the verifier's sentence,
// the same in every host.
type PackRefusedError struct{ Kind, Message string }

func (e *PackRefusedError) Error() string { return e.Message }

// PublicKey is a key trusted to sign packs (Verifier.ParsePublicKey,
// Verifier.ReadPublicKey).
type PublicKey struct {
	id   string
	text string
}

// KeyID is the first 16 hex digits of the sha256 of the key.
func (k PublicKey) KeyID() string { return k.id }

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
	// Now is the time expiry is checked against (to the second); zero:
	// time.Now().
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
	Name       string  `json:"name"`
	Version    string  `json:"version"`
	Tenant     string  `json:"tenant"`
	WITVersion string  `json:"wit_version"`
	Expires    *string `json:"expires"`
	KeyID      string  `json:"key_id"`
	SHA256     string  `json:"sha256"`
	// MayRelax: platform rules the pack may turn off for its tenant.
	MayRelax []string `json:"may_relax"`
}

// Verified is a pack that passed: its manifest, and the signed manifest
// (nil when unsigned and allowed).
type Verified struct {
	Manifest PackManifest
	Signed   *SignedManifest
}
