package resultsanitizer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var root = filepath.Join("..", "..")

func component(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "target", "components", name))
	if err != nil {
		t.Fatalf("%v (run `make build` first)", err)
	}
	return b
}

type vector struct {
	Name     string   `json:"name"`
	Flags    []string `json:"flags"`
	Request  string   `json:"request"`
	Response string   `json:"response"`
	// The command's stdin, when the request keeps less of it (head + tail).
	Stdin       *string `json:"stdin"`
	StdinBase64 *string `json:"stdin_base64"`
}

func vectors(t *testing.T) []vector {
	files, _ := filepath.Glob(filepath.Join(root, "tests", "vectors", "*.json"))
	sort.Strings(files)
	var out []vector
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if len(out) < 20 {
		t.Fatalf("%d vectors", len(out))
	}
	return out
}

func TestLayoutMatchesTheWIT(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "target", "components", "rule-pack.layout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var layout map[string]struct {
		Size, Align uint32
		Fields      []struct {
			Name, Type string
			Offset     uint32
		}
		Cases []string
	}
	if err := json.Unmarshal(b, &layout); err != nil {
		t.Fatal(err)
	}
	if len(layout) != len(RulePackTypes) {
		t.Fatalf("the WIT has %d types, the Go descriptors %d", len(layout), len(RulePackTypes))
	}
	for _, ty := range RulePackTypes {
		l, ok := layout[ty.Name]
		if !ok {
			t.Fatalf("%s is not in the WIT", ty.Name)
		}
		var want strings.Builder
		want.WriteString(ty.Name)
		want.WriteString(" size=" + itoa(l.Size) + " align=" + itoa(l.Align))
		for _, f := range l.Fields {
			want.WriteString(" " + f.Name + ":" + f.Type + "@" + itoa(f.Offset))
		}
		if len(l.Cases) > 0 {
			want.WriteString(" cases=" + strings.Join(l.Cases, ","))
		}
		if got := Describe(ty); got != want.String() {
			t.Errorf("layout differs:\n got  %s\n want %s", got, want.String())
		}
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// Both pipelines: the plain one and the pre-initialised one (its memory
// image written by the host: image.go), each metered (meter.go).
func TestEveryVectorThroughTheLibrary(t *testing.T) {
	for _, pipeline := range []string{"pipeline.wasm", "pipeline-warm.wasm"} {
		t.Run(pipeline, func(t *testing.T) {
			ctx := context.Background()
			s, err := NewUnverified(ctx, component(t, pipeline), component(t, "default-pack.wasm"), Config{Verifier: testVerifier(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			for _, v := range vectors(t) {
				got, err := s.SanitizeJSON(ctx, v.Request)
				if err != nil {
					t.Fatalf("%s: %v", v.Name, err)
				}
				if got != v.Response {
					t.Errorf("%s: response differs\n got  %.300s\n want %.300s", v.Name, got, v.Response)
				}
				checkResponse(t, v.Name, got)
			}
		})
	}
}

func TestTheSanitizeCommandPrintsEachMessage(t *testing.T) {
	bin := buildCommand(t)
	for _, v := range vectors(t) {
		var req struct {
			Input       *string `json:"input"`
			InputBase64 *string `json:"input_base64"`
		}
		json.Unmarshal([]byte(v.Request), &req)
		var stdin []byte
		if v.Stdin != nil {
			stdin = []byte(*v.Stdin)
		} else if v.StdinBase64 != nil {
			stdin, _ = base64.StdEncoding.DecodeString(*v.StdinBase64)
		} else if req.Input != nil {
			stdin = []byte(*req.Input)
		} else if req.InputBase64 != nil {
			stdin, _ = base64.StdEncoding.DecodeString(*req.InputBase64)
		}
		cmd := exec.Command(bin, v.Flags...)
		cmd.Dir = root
		cmd.Stdin = bytes.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var resp struct {
			Ok *struct {
				Message string `json:"message"`
			}
		}
		json.Unmarshal([]byte(v.Response), &resp)
		if resp.Ok == nil {
			if err == nil || !strings.Contains(stderr.String(), "error") {
				t.Errorf("%s: expected a failure, got %v / %s", v.Name, err, stderr.String())
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v: %s", v.Name, err, stderr.String())
		}
		if stdout.String() != resp.Ok.Message+"\n" {
			t.Errorf("%s: stdout differs\n got  %.300s\n want %.300s", v.Name, stdout.String(), resp.Ok.Message)
		}
		checkRecord(t, v.Name+" (command)", messageRecord(t, v.Name, strings.TrimSuffix(stdout.String(), "\n")))
	}
}

func newDefault(t *testing.T) (*Sanitizer, context.Context) {
	t.Helper()
	ctx := context.Background()
	s, err := NewUnverified(ctx, component(t, "pipeline.wasm"), component(t, "default-pack.wasm"), Config{Verifier: testVerifier(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	return s, ctx
}

func TestOptionsAndRecordsAreSnakeCase(t *testing.T) {
	s, ctx := newDefault(t)
	var log strings.Builder
	for i := range 400 {
		log.WriteString("line " + strconv.Itoa(i) + ": compiling crate number " + strconv.Itoa(i*7) + "\n")
	}
	for _, o := range []map[string]any{
		{"tool": "cargo", "max_tokens": 300},
		{"tool": "cargo", "format": "openai", "call_id": "call_1", "encoding": "cl100k_base", "max_chars": 2000},
		{"tool": "cargo", "format": "anthropic", "call_id": "toolu_1", "untrusted": true},
		{"tool": "cargo", "max_bytes": 3000, "tool_error": map[string]any{"code": "exit-status-1", "message": "failed"}},
	} {
		out, err := s.Sanitize(ctx, []byte(log.String()), o)
		if err != nil {
			t.Fatalf("%v: %v", o, err)
		}
		checkSanitized(t, fmt.Sprint(o), out)
		var rec struct{ Strategy, Encoding string }
		json.Unmarshal(out.Record, &rec)
		want := "o200k_base"
		if o["encoding"] != nil {
			want = o["encoding"].(string)
		}
		if rec.Encoding != want || rec.Strategy == "" {
			t.Errorf("%v: strategy %q, encoding %q", o, rec.Strategy, rec.Encoding)
		}
	}
	out, err := s.Sanitize(ctx, []byte(`{"content":[{"type":"text","text":"hello"}],"isError":true}`), map[string]any{"tool": "t", "input": "mcp"})
	if err != nil || !out.IsError {
		t.Fatalf("MCP input: %v", err)
	}
	checkSanitized(t, "MCP input", out)
	// The old spellings are gone: they are invalid options now.
	for _, o := range []map[string]any{{"format": "Openai"}, {"input": "Mcp"}, {"encoding": "O200kBase"}} {
		_, err := s.Sanitize(ctx, []byte("x"), o)
		var se *SanitizeError
		if !errors.As(err, &se) || se.Kind != "invalid options" {
			t.Errorf("%v: expected invalid options, got %v", o, err)
		}
	}
}

func TestTheBudgetSaysHowManyBytesToRead(t *testing.T) {
	s, ctx := newDefault(t)
	raw, err := s.EffectiveBudget(ctx, map[string]any{"tool": "t", "max_bytes": 5000})
	if err != nil {
		t.Fatal(err)
	}
	if raw.MaxBytes != 5000 || raw.ReadBytes != 5001 {
		t.Errorf("raw: %+v", raw)
	}
	html, err := s.EffectiveBudget(ctx, map[string]any{"tool": "t", "max_bytes": 5000, "content_type": "text/html; charset=utf-8"})
	if err != nil {
		t.Fatal(err)
	}
	if html.ReadBytes != max(html.MaxBytes, html.MarkupBytes)+1 || html.MarkupBytes <= 5000 {
		t.Errorf("html: %+v", html)
	}
	mcp, err := s.EffectiveBudget(ctx, map[string]any{"tool": "t", "input": "mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if mcp.ReadBytes != 64<<20+1 {
		t.Errorf("mcp: %+v", mcp)
	}
	_, err = s.EffectiveBudget(ctx, map[string]any{"max_tokens": 10})
	var se *SanitizeError
	if !errors.As(err, &se) || se.Kind != "invalid options" || !strings.Contains(se.Message, "max-tokens") {
		t.Errorf("expected invalid options, got %v", err)
	}
}

func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sanitize")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/sanitize").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return bin
}

func TestTheCommandReadsAsTheBudgetSays(t *testing.T) {
	bin := buildCommand(t)
	command := func(stdin []byte, args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Stdin = bytes.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	// Raw input past the cap: head and tail on whole lines, the middle
	// drained, the whole size known; at the drain limit reading stops.
	lines := bytes.Repeat([]byte("0123456789\n"), 2000)
	type span struct {
		StartByte uint64 `json:"start_byte"`
		EndByte   uint64 `json:"end_byte"`
		StartLine uint64 `json:"start_line"`
		EndLine   uint64 `json:"end_line"`
	}
	var r struct {
		InputBytes    uint64 `json:"input_bytes"`
		OriginalBytes uint64 `json:"original_bytes"`
		OriginalLines uint64 `json:"original_lines"`
		ByteCapHit    bool   `json:"byte_cap_hit"`
		Omitted       []span `json:"omitted"`
	}
	for _, c := range []struct {
		args []string
		ok   func() bool
	}{
		{[]string{"--tool", "t", "--max-bytes", "3000"}, func() bool {
			return r.InputBytes == 2992 && r.OriginalBytes == 22000 && r.OriginalLines == 2000 && !r.ByteCapHit &&
				len(r.Omitted) == 1 && r.Omitted[0] == span{2244, 21252, 205, 1932}
		}},
		{[]string{"--tool", "t", "--max-bytes", "3000", "--drain-limit", "5000"}, func() bool {
			return r.ByteCapHit && r.OriginalBytes == 5000
		}},
	} {
		out, stderr, err := command(lines, c.args...)
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		rec := messageRecord(t, "raw", out)
		checkRecord(t, "raw", rec)
		r.Omitted = nil
		json.Unmarshal(rec, &r)
		if !c.ok() {
			t.Errorf("raw %v: %+v", c.args, r)
		}
	}
	// MCP input of read_bytes bytes is refused as the Rust CLI refuses it.
	big := append([]byte(`{"content":[{"type":"text","text":"`), bytes.Repeat([]byte("a"), 64<<20)...)
	_, stderr, err := command(big, "--tool", "t", "--input", "mcp")
	if err == nil || stderr != "result-sanitizer: error: invalid input: MCP input larger than 67108864 bytes\n" {
		t.Errorf("large MCP input: %v, %q", err, stderr)
	}
	// Old spellings are refused by the command too.
	_, stderr, err = command([]byte("x"), "--tool", "t", "--format", "Openai")
	if err == nil || !strings.Contains(stderr, "unknown format") {
		t.Errorf("--format Openai: %v, %q", err, stderr)
	}
}

func TestALoopingPackIsStoppedByTheDeadline(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, component(t, "pipeline.wasm"), component(t, filepath.Join("test-packs", "slow.wasm")), Config{Verifier: testVerifier(t), Timeout: 1500 * time.Millisecond, Trust: Trust{AllowUnsigned: true}, PlatformPack: component(t, "default-pack.wasm")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	t0 := time.Now()
	_, err = s.Sanitize(ctx, []byte("LOOP please"), map[string]any{"tool": "x"})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("expected a timeout, got %v", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("stopped only after %s", d)
	}
	out, err := s.Sanitize(ctx, []byte("fine now"), map[string]any{"tool": "x"})
	if err != nil || !strings.Contains(out.Message, "fine now") {
		t.Fatalf("the next call: %v", err)
	}
	checkSanitized(t, "the next call", out)
}

func TestAGreedyPackHitsItsMemoryCap(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, component(t, "pipeline.wasm"), component(t, filepath.Join("test-packs", "greedy.wasm")), Config{Verifier: testVerifier(t), PackMemoryMiB: 16, Trust: Trust{AllowUnsigned: true}, PlatformPack: component(t, "default-pack.wasm")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	_, err = s.Sanitize(ctx, []byte("MORE memory"), map[string]any{"tool": "x"})
	var trap *TrapError
	if !errors.As(err, &trap) {
		t.Fatalf("expected a trap, got %v", err)
	}
	out, err := s.Sanitize(ctx, []byte("fine now"), map[string]any{"tool": "x"})
	if err != nil || !strings.Contains(out.Message, "fine now") {
		t.Fatalf("the next call: %v", err)
	}
	checkSanitized(t, "the next call", out)
	_, err = s.Sanitize(ctx, []byte("x"), map[string]any{"max_tokens": 10})
	var se *SanitizeError
	if !errors.As(err, &se) || se.Kind != "invalid options" {
		t.Fatalf("expected a typed error, got %v", err)
	}
}

// A long stdin, drained in many steps whose boundaries fall where this
// host's reads put them, gives the Rust CLI's bytes.
func TestALongStdinGivesTheRustCLIsBytes(t *testing.T) {
	bin := buildCommand(t)
	var in bytes.Buffer
	for i := 0; i < 240000; i++ {
		if i%50000 == 7 {
			fmt.Fprintf(&in, "error: unit %d failed: token ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M rejected\n", i)
		} else {
			fmt.Fprintf(&in, "   Compiling unit %d (step %d)\n", i, i%97)
		}
	}
	flags := []string{"--tool", "cargo", "--max-tokens", "2000"}
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Stdin = bytes.NewReader(in.Bytes())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v: %s", name, err, stderr.String())
		}
		return stdout.String()
	}
	cli, err := filepath.Abs(filepath.Join(root, "target", "release", "result-sanitizer"))
	if err != nil {
		t.Fatal(err)
	}
	rust := run(cli, append([]string{"sanitize"}, flags...)...)
	got := run(bin, flags...)
	if got != rust {
		t.Fatalf("the Go command differs from the Rust CLI\n got  %.400s\n want %.400s", got, rust)
	}
	if !strings.Contains(got, `\n200008| error: unit 200007 failed: token [REDACTED:github-token] rejected`) || strings.Contains(got, "ghp_") {
		t.Errorf("the drained error line is not shown redacted with its number: %.400s", got)
	}
}

// A FILE gives the Rust CLI's bytes: its name gives the content type and
// its size the output's (a log cut as head + tail, a source file, an HTML
// page read whole).
func TestAFileGivesTheRustCLIsBytes(t *testing.T) {
	bin := buildCommand(t)
	cli, err := filepath.Abs(filepath.Join(root, "target", "release", "result-sanitizer"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v: %s", name, err, stderr.String())
		}
		return stdout.String()
	}
	for _, file := range []string{"examples/build-log.txt", "guest/src/pipeline.rs", "examples/page.html"} {
		flags := []string{file, "--tool", "read_file", "--max-tokens", "2000"}
		rust := run(cli, append([]string{"sanitize"}, flags...)...)
		if got := run(bin, flags...); got != rust {
			t.Fatalf("%s: the Go command differs from the Rust CLI\n got  %.400s\n want %.400s", file, got, rust)
		}
	}
	if got := run(bin, "guest/src/pipeline.rs"); !strings.Contains(got, `"class":"code"`) {
		t.Errorf("a .rs file is not read as code: %.300s", got)
	}
}
