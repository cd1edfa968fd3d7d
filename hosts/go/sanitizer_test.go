package resultsanitizer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
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

func TestEveryVectorThroughTheLibrary(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, component(t, "pipeline.wasm"), component(t, "default-pack.wasm"), Config{})
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
	}
}

func TestTheSanitizeCommandPrintsEachMessage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sanitize")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/sanitize").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, v := range vectors(t) {
		var req struct {
			Input       *string `json:"input"`
			InputBase64 *string `json:"input_base64"`
		}
		json.Unmarshal([]byte(v.Request), &req)
		var stdin []byte
		if req.Input != nil {
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
	}
}

func TestALoopingPackIsStoppedByTheDeadline(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, component(t, "pipeline.wasm"), component(t, filepath.Join("test-packs", "slow.wasm")), Config{Timeout: 1500 * time.Millisecond})
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
}

func TestAGreedyPackHitsItsMemoryCap(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, component(t, "pipeline.wasm"), component(t, filepath.Join("test-packs", "greedy.wasm")), Config{PackMemoryMiB: 16})
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
	_, err = s.Sanitize(ctx, []byte("x"), map[string]any{"max_tokens": 10})
	var se *SanitizeError
	if !errors.As(err, &se) || se.Kind != "invalid options" {
		t.Fatalf("expected a typed error, got %v", err)
	}
}
