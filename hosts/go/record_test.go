package resultsanitizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The record schema every record the Go host emits is validated against
// (docs/record.schema.json, draft 2020-12).
var recordSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	path := filepath.Join(root, "docs", "record.schema.json")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	const url = "file:///record.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// validateRecord validates one record (JSON) against the schema.
func validateRecord(record []byte) error {
	sch, err := recordSchema()
	if err != nil {
		return fmt.Errorf("record schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(record))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// checkRecord fails the test unless record is valid.
func checkRecord(t *testing.T, what string, record []byte) {
	t.Helper()
	if err := validateRecord(record); err != nil {
		t.Errorf("%s: the record does not match docs/record.schema.json: %v\n%.500s", what, err, record)
	}
}

// messageRecord is the record a tool message carries: in the MCP result's
// _meta["result-sanitizer/record"], or next to an OpenAI / Anthropic
// message as "record".
func messageRecord(t *testing.T, what, message string) []byte {
	t.Helper()
	var m struct {
		Meta   map[string]json.RawMessage `json:"_meta"`
		Record json.RawMessage            `json:"record"`
	}
	if err := json.Unmarshal([]byte(message), &m); err != nil {
		t.Fatalf("%s: the message is not JSON: %v", what, err)
	}
	if r := m.Meta["result-sanitizer/record"]; r != nil {
		return r
	}
	if m.Record == nil {
		t.Fatalf("%s: the message carries no record: %.300s", what, message)
	}
	return m.Record
}

// checkSanitized validates the record of a result and the one inside its
// message, which must be the same.
func checkSanitized(t *testing.T, what string, out *Sanitized) {
	t.Helper()
	checkRecord(t, what, out.Record)
	inner := messageRecord(t, what, out.Message)
	checkRecord(t, what+" (in the message)", inner)
	var a, b any
	json.Unmarshal(out.Record, &a)
	json.Unmarshal(inner, &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("%s: the message's record differs from the result's", what)
	}
}

// checkResponse validates the record of a JSON twin response (an Err has
// none).
func checkResponse(t *testing.T, what, response string) {
	t.Helper()
	var r struct{ Ok *Sanitized }
	if err := json.Unmarshal([]byte(response), &r); err != nil {
		t.Fatalf("%s: the response is not JSON: %v", what, err)
	}
	if r.Ok != nil {
		checkSanitized(t, what, r.Ok)
	}
}

// The helper can fail: old (UpperCamelCase) enum cases, unknown fields and
// missing fields are rejected.
func TestTheRecordCheckRejectsWrongRecords(t *testing.T) {
	var good []byte
	for _, v := range vectors(t) {
		var r struct{ Ok *Sanitized }
		json.Unmarshal([]byte(v.Response), &r)
		if r.Ok != nil && strings.Contains(string(r.Ok.Record), `"strategy":"head_tail_lines"`) {
			good = r.Ok.Record
			break
		}
	}
	if good == nil {
		t.Fatal("no vector's record has strategy head_tail_lines")
	}
	if err := validateRecord(good); err != nil {
		t.Fatalf("a vector's record is rejected: %v", err)
	}
	for _, c := range []struct{ name, from, to string }{
		{"an UpperCamelCase strategy", `"strategy":"head_tail_lines"`, `"strategy":"HeadTailLines"`},
		{"an UpperCamelCase encoding", `"encoding":"o200k_base"`, `"encoding":"O200kBase"`},
		{"an UpperCamelCase class", `"class":"text"`, `"class":"Text"`},
		{"an UpperCamelCase stage", `"stage":"byte_cap"`, `"stage":"ByteCap"`},
		{"an unknown field", `"truncated":`, `"cut":true,"truncated":`},
		{"a missing field", `"truncated":true,`, ``},
		{"a string for a count", `"invalid_utf8":0`, `"invalid_utf8":"0"`},
	} {
		bad := strings.Replace(string(good), c.from, c.to, 1)
		if bad == string(good) {
			t.Fatalf("%s: %s is not in the record", c.name, c.from)
		}
		if validateRecord([]byte(bad)) == nil {
			t.Errorf("%s is accepted", c.name)
		}
	}
}
