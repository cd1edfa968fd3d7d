package resultsanitizer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
)

// DrainChunk is how many bytes of a long output's middle go to one `drain`
// step (as the Rust host sends).
const DrainChunk = 1 << 20

// DefaultDrainLimit is where reading stops by default: a producer that
// never ends is cut there.
const DefaultDrainLimit = 1 << 30

// HeadTail is a long output as a host keeps it: head and tail, and the
// middle drained.
type HeadTail struct {
	// Bytes is the head, then the tail: the input to sanitize.
	Bytes []byte
	// Gap is the drained middle (the twin's JSON, to pass as the "gap"
	// option), or nil when the output fit.
	Gap json.RawMessage
	// Total is the number of bytes read in all.
	Total uint64
	// Stopped: reading stopped at the drain limit; the output went on.
	Stopped bool
}

// DrainJSON is the JSON twin of `drain`: one step over a long output's
// middle.
func (s *Sanitizer) DrainJSON(ctx context.Context, request string) (string, error) {
	return s.call(ctx, "drain-json", request)
}

func emptyGap(start int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"start_byte": start, "bytes": 0, "newlines": 0, "ends_line": false,
		"error_lines": []any{}, "error_lines_seen": 0, "redactions": []any{}, "unfinished": false,
	})
	return b
}

// drain runs one step over pending and returns the new gap and what the
// step did not consume.
func (s *Sanitizer) drain(ctx context.Context, gap json.RawMessage, pending []byte, last bool) (json.RawMessage, []byte, error) {
	req, _ := json.Marshal(map[string]any{"gap": gap, "data_base64": base64.StdEncoding.EncodeToString(pending), "last": last})
	out, err := s.DrainJSON(ctx, string(req))
	if err != nil {
		return nil, nil, err
	}
	var r struct {
		Ok *struct {
			Gap      json.RawMessage `json:"gap"`
			Consumed int             `json:"consumed"`
		}
		Err map[string]string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return nil, nil, err
	}
	if r.Ok == nil {
		return nil, nil, toError(r.Err)
	}
	if r.Ok.Consumed > len(pending) || (last && r.Ok.Consumed != len(pending)) {
		return nil, nil, errors.New("drain step consumed a bad number of bytes")
	}
	rest := pending[r.Ok.Consumed:]
	if !last && len(rest) > 2*DrainChunk+(1<<20) {
		return nil, nil, errors.New("drain step made no progress")
	}
	return r.Ok.Gap, rest, nil
}

// ReadHeadTail reads r (a pipe, a socket, an HTTP body) to its end or to
// drainLimit bytes, keeping the first head bytes and the last tail (the
// budget's HeadBytes and TailBytes). The bytes between go through the
// pipeline's `drain` step once and are not kept.
func (s *Sanitizer) ReadHeadTail(ctx context.Context, r io.Reader, head, tail, drainLimit uint64) (*HeadTail, error) {
	h, t := int(head), int(tail)
	var kept, ring, pending []byte
	var gap json.RawMessage
	buf := make([]byte, 64*1024)
	var total uint64
	stopped := false
	spill := func() {
		// What falls out of the ring (all but its last `tail` bytes) is drained.
		out := len(ring) - t
		pending = append(pending, ring[:out]...)
		ring = append(ring[:0], ring[out:]...)
		if gap == nil {
			gap = emptyGap(len(kept))
		}
	}
	for {
		room := min(drainLimit-total, uint64(len(buf)))
		if room == 0 {
			// At the limit: stopped only if the output goes on.
			for {
				n, err := r.Read(buf[:1])
				if n > 0 {
					stopped = true
				}
				if n > 0 || err != nil {
					break
				}
			}
			break
		}
		n, err := r.Read(buf[:room])
		total += uint64(n)
		data := buf[:n]
		if len(kept) < h {
			k := min(h-len(kept), len(data))
			kept = append(kept, data[:k]...)
			data = data[k:]
		}
		ring = append(ring, data...)
		if len(ring) > t+len(buf) {
			spill()
			if len(pending) >= DrainChunk {
				var derr error
				if gap, pending, derr = s.drain(ctx, gap, pending, false); derr != nil {
					return nil, derr
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(ring) > t {
		spill()
	}
	if gap != nil {
		var err error
		if gap, _, err = s.drain(ctx, gap, pending, true); err != nil {
			return nil, err
		}
	}
	if stopped {
		// Even with nothing drained (a limit below the cap), the pipeline
		// must know the output went on.
		if gap == nil {
			gap = emptyGap(len(kept))
		}
		var g map[string]any
		d := json.NewDecoder(bytes.NewReader(gap))
		d.UseNumber() // byte counts stay exact
		if err := d.Decode(&g); err != nil {
			return nil, err
		}
		g["unfinished"] = true
		gap, _ = json.Marshal(g)
	}
	return &HeadTail{Bytes: append(kept, ring...), Gap: gap, Total: total, Stopped: stopped}, nil
}
