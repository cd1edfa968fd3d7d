// Command sanitize has the Rust CLI's `sanitize` contract: stdin in, the
// message JSON out (one line), errors on stderr with exit status 1.
//
//	go run ./hosts/go/cmd/sanitize --tool shell --max-tokens 2000 < output.txt
//
// The pipeline and pack components are found under target/components
// (searched upward from the working directory) unless --pipeline and
// --pack name them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	rs "resultsanitizer/host"
)

const maxMCPInput = 64 << 20

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
	lenient := flag.Bool("lenient", false, "lenient (documentation) mode")
	pipeline := flag.String("pipeline", "", "pipeline component (default: target/components/pipeline.wasm)")
	pack := flag.String("pack", "", "rule pack component (default: target/components/default-pack.wasm)")
	timeout := flag.Duration("timeout", 5*time.Second, "wall-clock limit per call")
	flag.Parse()

	cap1 := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	opts := map[string]any{"tool": *tool, "call_id": *callID, "untrusted": *untrusted, "lenient": *lenient}
	switch *format {
	case "mcp", "openai", "anthropic":
		opts["format"] = cap1(*format)
	default:
		return fmt.Errorf("unknown format %q", *format)
	}
	switch *input {
	case "raw", "mcp":
		opts["input"] = cap1(*input)
	default:
		return fmt.Errorf("unknown input %q", *input)
	}
	switch *encoding {
	case "o200k_base":
		opts["encoding"] = "O200kBase"
	case "cl100k_base":
		opts["encoding"] = "Cl100kBase"
	default:
		return fmt.Errorf("unknown encoding %q", *encoding)
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
	if *pipeline == "" {
		*pipeline = find("pipeline.wasm")
	}
	if *pack == "" {
		*pack = find("default-pack.wasm")
	}
	pw, err := os.ReadFile(*pipeline)
	if err != nil {
		return err
	}
	pk, err := os.ReadFile(*pack)
	if err != nil {
		return err
	}
	ctx := context.Background()
	cacheDir := ""
	if d, err := os.UserCacheDir(); err == nil {
		cacheDir = filepath.Join(d, "result-sanitizer-go")
	}
	s, err := rs.New(ctx, pw, pk, rs.Config{Timeout: *timeout, CacheDir: cacheDir})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	// Read at most the cap + 1 bytes, as the Rust CLI does.
	var limit uint64 = maxMCPInput + 1
	if *input == "raw" {
		b, err := s.EffectiveBudget(ctx, opts)
		if err != nil {
			return err
		}
		limit = b.MaxBytes
		if strings.HasPrefix(strings.ToLower(*contentType), "text/html") && b.MarkupBytes > limit {
			limit = b.MarkupBytes
		}
		limit++
	}
	data, err := io.ReadAll(io.LimitReader(os.Stdin, int64(limit)))
	if err != nil {
		return err
	}
	if *input == "mcp" && len(data) > maxMCPInput {
		return errors.New("invalid input: MCP input larger than 67108864 bytes")
	}
	out, err := s.Sanitize(ctx, data, opts)
	if err != nil {
		return err
	}
	_, err = fmt.Println(out.Message)
	return err
}
