// Command sanitize has the Rust CLI's `sanitize` contract: stdin in, the
// message JSON out (one line), errors on stderr with exit status 1.
//
//	go run ./hosts/go/cmd/sanitize --tool shell --max-tokens 2000 < output.txt
//
// The pipeline and default pack components are found under
// target/components (searched upward from the working directory) unless
// --pipeline names it. As with the Rust CLI, a --pack must be signed by a
// --trusted-key (repeat for several) unless --allow-unsigned, and --tenant
// is the tenant it serves; the default pack, built with the repository, is
// not verified.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	rs "resultsanitizer/host"
)

type optionalUint struct {
	set bool
	v   uint64
}

func (o *optionalUint) String() string { return fmt.Sprint(o.v) }
func (o *optionalUint) Set(s string) error {
	_, err := fmt.Sscan(s, &o.v)
	o.set = err == nil
	return err
}

// keyFiles is a repeatable --trusted-key.
type keyFiles []string

func (k *keyFiles) String() string     { return strings.Join(*k, ",") }
func (k *keyFiles) Set(s string) error { *k = append(*k, s); return nil }

func find(name string) string {
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "target", "components", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("target", "components", name)
		}
		dir = parent
	}
}

// defaultPipeline is the pre-initialised pipeline (pipeline-warm.wasm: the
// tokenizer tables built at build time, in its memory image), as the Rust
// and Python hosts run: the plain pipeline.wasm builds them on its first
// call in each instance, which under wazero takes about a second. The
// plain one when the warm one is not there.
func defaultPipeline() string {
	if p := find("pipeline-warm.wasm"); fileExists(p) {
		return p
	}
	return find("pipeline.wasm")
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// cacheDir is where wazero's compiled code is kept between runs:
// $RESULT_SANITIZER_GO_CACHE ("off": nowhere), else result-sanitizer-go in
// the user cache directory ("": none when there is none).
func cacheDir() string {
	if d, ok := os.LookupEnv("RESULT_SANITIZER_GO_CACHE"); ok && d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "result-sanitizer-go")
	}
	return ""
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "result-sanitizer: error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	tool := flag.String("tool", "", "tool name")
	callID := flag.String("call-id", "", "tool call id")
	format := flag.String("format", "mcp", "mcp, openai or anthropic")
	input := flag.String("input", "raw", "raw or mcp")
	var maxBytes, maxChars, maxTokens optionalUint
	flag.Var(&maxBytes, "max-bytes", "byte hard cap")
	flag.Var(&maxChars, "max-chars", "character budget")
	flag.Var(&maxTokens, "max-tokens", "token budget")
	encoding := flag.String("encoding", "o200k_base", "o200k_base or cl100k_base")
	untrusted := flag.Bool("untrusted", false, "wrap in the untrusted-source boundary")
	contentType := flag.String("content-type", "", "content type of raw input")
	fileName := flag.String("file-name", "", "name of the file stdin holds (a source file's extension gives the content type)")
	structuredFit := flag.String("structured-fit", "", "MCP input: marked, schema or omitted (how structuredContent over its share is fitted)")
	lenient := flag.Bool("lenient", false, "lenient (documentation) mode")
	pii := flag.Bool("pii", false, "redact personal data (emails, phone numbers, cards, IBANs, SSNs, private IPs, dates of birth)")
	piiPublicIP := flag.Bool("pii-public-ip", false, "with -pii: public IP addresses too")
	pipeline := flag.String("pipeline", "", "pipeline component (default: target/components/pipeline-warm.wasm, else pipeline.wasm)")
	pack := flag.String("pack", "", "rule pack component, verified (default: target/components/default-pack.wasm)")
	verifier := flag.String("verifier", "", "the pack verifier component (default: target/components/verifier.wasm)")
	var trusted keyFiles
	flag.Var(&trusted, "trusted-key", "public key (PREFIX.pub) trusted to sign --pack; repeat for several")
	allowUnsigned := flag.Bool("allow-unsigned", false, "accept an unsigned --pack (development only)")
	tenant := flag.String("tenant", "", "tenant the --pack serves")
	platformPack := flag.String("platform-pack", "", "the platform's pack, applied whatever --pack says (default: target/components/default-pack.wasm)")
	timeout := flag.Duration("timeout", 5*time.Second, "wall-clock limit per call")
	drainLimit := flag.Uint64("drain-limit", rs.DefaultDrainLimit, "stop reading after this many bytes")
	flag.Parse()
	// Flags may follow FILE, as in the Rust CLI.
	var files []string
	for args := flag.Args(); len(args) > 0; args = flag.Args() {
		files = append(files, args[0])
		if err := flag.CommandLine.Parse(args[1:]); err != nil {
			return err
		}
	}
	if len(files) > 1 {
		return fmt.Errorf("invalid options: one FILE at most")
	}

	// The flags' values are the JSON twin's enum cases (snake_case).
	// stdin is not kept: an omitted part cannot be read back.
	opts := map[string]any{"tool": *tool, "call_id": *callID, "untrusted": *untrusted, "lenient": *lenient, "source": "pipe",
		"pii": *pii, "pii_public_ip": *pii && *piiPublicIP}
	for _, e := range []struct {
		name, value string
		cases       []string
	}{
		{"format", *format, []string{"mcp", "openai", "anthropic"}},
		{"input", *input, []string{"raw", "mcp"}},
		{"encoding", *encoding, []string{"o200k_base", "cl100k_base"}},
	} {
		if !slices.Contains(e.cases, e.value) {
			return fmt.Errorf("unknown %s %q; expected one of %s", e.name, e.value, strings.Join(e.cases, ", "))
		}
		opts[e.name] = e.value
	}
	if maxBytes.set {
		opts["max_bytes"] = maxBytes.v
	}
	if maxChars.set {
		opts["max_chars"] = maxChars.v
	}
	if maxTokens.set {
		opts["max_tokens"] = maxTokens.v
	}
	if *contentType != "" {
		opts["content_type"] = *contentType
	}
	// A FILE (not `-`): its name gives the content type, and a regular
	// file's size is the output's size; a regular file is read by offset
	// (head, tail, the middle scanned up to rs.ScanBound), anything else as
	// stdin is, as a stream. As the Rust CLI.
	var in io.Reader = os.Stdin
	var regular *os.File
	var size uint64
	if len(files) == 1 && files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			regular, size = f, uint64(st.Size())
			opts["source"] = "file"
			opts["total_bytes"] = size
		}
		if *fileName == "" {
			*fileName = files[0]
		}
	}
	if *structuredFit != "" {
		opts["structured_fit"] = *structuredFit
	}
	if *fileName != "" {
		opts["file_name"] = *fileName
	}
	if *pipeline == "" {
		*pipeline = defaultPipeline()
	}
	// No --tenant: a pack of any scope (as the Rust CLI).
	cfg := rs.Config{Timeout: *timeout, Trust: rs.Trust{AllowUnsigned: *allowUnsigned, Tenant: *tenant, AnyTenant: *tenant == ""}}
	if *verifier == "" {
		*verifier = find("verifier.wasm")
	}
	vw, err := os.ReadFile(*verifier)
	if err != nil {
		return err
	}
	ctx := context.Background()
	cfg.CacheDir = cacheDir()
	if cfg.Verifier, err = rs.NewVerifierWithCache(ctx, vw, cfg.CacheDir); err != nil {
		return err
	}
	for _, f := range trusted {
		k, err := cfg.Verifier.ReadPublicKey(ctx, f)
		if err != nil {
			return err
		}
		cfg.Trust.Keys = append(cfg.Trust.Keys, k)
	}
	newSanitizer := rs.New
	if *pack == "" {
		*pack = find("default-pack.wasm")
		newSanitizer = rs.NewUnverified
	}
	pw, err := os.ReadFile(*pipeline)
	if err != nil {
		return err
	}
	pk, err := os.ReadFile(*pack)
	if err != nil {
		return err
	}
	if *platformPack == "" {
		*platformPack = find("default-pack.wasm")
	}
	platform, err := os.ReadFile(*platformPack)
	if err != nil {
		return err
	}
	cfg.PlatformPack = platform
	s, err := newSanitizer(ctx, pw, pk, cfg)
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	// Read as the pipeline says, as the Rust CLI does: raw output as head +
	// tail with the middle drained (HeadBytes, TailBytes), documents under
	// read_bytes (the markup budget + 1 for declared HTML, the MCP
	// bound + 1); MCP input that fills it is refused.
	b, err := s.EffectiveBudget(ctx, opts)
	if err != nil {
		return err
	}
	var data []byte
	if b.HeadBytes > 0 {
		read := func() (*rs.HeadTail, error) {
			if regular != nil {
				return s.ReadFileHeadTail(ctx, regular, size, b.HeadBytes, b.TailBytes, rs.ScanBound)
			}
			return s.ReadHeadTail(ctx, in, b.HeadBytes, b.TailBytes, *drainLimit)
		}
		ht, err := read()
		if err != nil {
			return err
		}
		data = ht.Bytes
		if ht.Gap != nil {
			opts["gap"] = ht.Gap
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(in, int64(min(b.ReadBytes, math.MaxInt64))))
		if err != nil {
			return err
		}
		if *input == "mcp" && uint64(len(data)) >= b.ReadBytes {
			return fmt.Errorf("invalid input: MCP input larger than %d bytes", b.ReadBytes-1)
		}
	}
	out, err := s.Sanitize(ctx, data, opts)
	if err != nil {
		return err
	}
	_, err = fmt.Println(out.Message)
	return err
}
