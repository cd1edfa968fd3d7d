package resultsanitizer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// ScanBound is how much of a file's middle ReadFileHeadTail scans (drains)
// at most: the first 64 MiB after the head, as the Rust host
// (host/src/io.rs, SCAN_BOUND). Past it the middle is only counted (its
// bytes and newlines, skipping a sparse file's holes): its error lines and
// secrets are not looked for, and the marker says which bytes were not
// scanned.
const ScanBound = 64 << 20

// ReadFileHeadTail reads a regular file of size bytes as ReadHeadTail reads
// a stream, but by offset: the head from 0, the tail from size-tail, and of
// the middle only its first scanBound bytes go through the `drain` step;
// the rest is counted, not sent to the pipeline. So a 10 GB log answers in
// the time its head, its tail and the bound take. The same steps as the
// Rust host's io::read_file_head_tail, so the same gap and the same bytes.
func (s *Sanitizer) ReadFileHeadTail(ctx context.Context, f *os.File, size, head, tail, scanBound uint64) (*HeadTail, error) {
	if size <= head+tail {
		b := make([]byte, size)
		if err := readAt(f, b, 0); err != nil {
			return nil, err
		}
		return &HeadTail{Bytes: b, Total: size}, nil
	}
	kept := make([]byte, head, head+tail)
	if err := readAt(f, kept, 0); err != nil {
		return nil, err
	}
	midEnd := size - tail
	scanEnd := min(midEnd, head+min(scanBound, ^uint64(0)-head))
	gap := emptyGap(int(head))
	pending := make([]byte, 0, 2*DrainChunk)
	var err error
	drainAll := func() error {
		gap, pending, err = s.drain(ctx, gap, pending, true)
		return err
	}
	// Only the data is drained: a sparse file's holes (zeros: no line, no
	// secret) are counted.
	off, holes := head, false
	for r := (dataRegions{f: f, at: head, to: scanEnd}); ; {
		start, end, ok := r.next()
		if !ok {
			break
		}
		if start > off {
			if err := drainAll(); err != nil {
				return nil, err
			}
			if gap, err = editGap(gap, start-off, 0, false, 0); err != nil {
				return nil, err
			}
			holes = true
		}
		off = start
		for off < end {
			n := min(end-off, DrainChunk)
			at := len(pending)
			pending = slices.Grow(pending, int(n))[:at+int(n)]
			if err := readAt(f, pending[at:], off); err != nil {
				return nil, err
			}
			off += n
			if len(pending) >= DrainChunk && off < end {
				if gap, pending, err = s.drain(ctx, gap, pending, false); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := drainAll(); err != nil {
		return nil, err
	}
	if off < scanEnd {
		if gap, err = editGap(gap, scanEnd-off, 0, false, 0); err != nil {
			return nil, err
		}
		holes = true
	}
	if scanEnd < midEnd {
		newlines, last, err := countNewlines(f, scanEnd, midEnd)
		if err != nil {
			return nil, err
		}
		if gap, err = editGap(gap, midEnd-scanEnd, newlines, last == '\n', midEnd-scanEnd); err != nil {
			return nil, err
		}
	}
	if scanEnd < midEnd || holes {
		// Its JSON nesting is not known past the bound (nor across a hole).
		if gap, err = deadScans(gap); err != nil {
			return nil, err
		}
	}
	t := kept[head : head+tail]
	if err := readAt(f, t, midEnd); err != nil {
		return nil, err
	}
	return &HeadTail{Bytes: kept[:head+tail], Gap: gap, Total: size}, nil
}

// readAt fills b from offset off (a short file is an error).
func readAt(f *os.File, b []byte, off uint64) error {
	_, err := f.ReadAt(b, int64(off))
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: shorter than its size: %w", f.Name(), io.ErrUnexpectedEOF)
	}
	return err
}

// decodeGap decodes a gap with its numbers kept exact.
func decodeGap(gap json.RawMessage) (map[string]any, error) {
	var g map[string]any
	d := json.NewDecoder(bytes.NewReader(gap))
	d.UseNumber()
	if err := d.Decode(&g); err != nil {
		return nil, err
	}
	return g, nil
}

func gapUint(g map[string]any, key string) (uint64, error) {
	switch v := g[key].(type) {
	case nil:
		return 0, nil
	case json.Number:
		return strconv.ParseUint(v.String(), 10, 64)
	default:
		return 0, fmt.Errorf("the gap's %s is not a number", key)
	}
}

// editGap adds bytes counted by the host, not drained: n bytes holding
// newlines newlines, ending a line or not; unscanned of them past the scan
// bound (0 for a hole).
func editGap(gap json.RawMessage, n, newlines uint64, endsLine bool, unscanned uint64) (json.RawMessage, error) {
	g, err := decodeGap(gap)
	if err != nil {
		return nil, err
	}
	b, err := gapUint(g, "bytes")
	if err != nil {
		return nil, err
	}
	nl, err := gapUint(g, "newlines")
	if err != nil {
		return nil, err
	}
	g["bytes"], g["newlines"], g["ends_line"] = b+n, nl+newlines, endsLine
	if unscanned > 0 {
		g["unscanned"] = unscanned
	}
	return json.Marshal(g)
}

// deadScans marks the gap's JSON scans dead (three dead ones if it has
// none), as the Rust host does.
func deadScans(gap json.RawMessage) (json.RawMessage, error) {
	g, err := decodeGap(gap)
	if err != nil {
		return nil, err
	}
	scans, _ := g["json"].([]any)
	if len(scans) == 0 {
		scans = nil
		for range 3 {
			scans = append(scans, map[string]any{"in_str": false, "esc": false, "dead": true, "depth": 0, "min_depth": 0, "commas": 0})
		}
	}
	for _, sc := range scans {
		m, ok := sc.(map[string]any)
		if !ok {
			return nil, errors.New("the gap's json scans are not objects")
		}
		m["dead"] = true
	}
	g["json"] = scans
	return json.Marshal(g)
}

// dataRegions walks the data regions of bytes at..to of a file, in order
// (SEEK_DATA, SEEK_HOLE); the whole range when the file system cannot
// tell. The Rust host's DataRegions, step for step.
type dataRegions struct {
	f      *os.File
	at, to uint64
}

func (r *dataRegions) next() (start, end uint64, ok bool) {
	if r.at >= r.to {
		return 0, 0, false
	}
	data, err := seekData(r.f, r.at)
	switch {
	case errors.Is(err, syscall.ENXIO):
		r.at = r.to // a hole to the end
		return 0, 0, false
	case err != nil:
		start = r.at // no SEEK_DATA here: all of it is data
	default:
		start = max(data, r.at)
	}
	if start >= r.to {
		r.at = r.to
		return 0, 0, false
	}
	end = r.to
	if hole, err := seekHole(r.f, start); err == nil {
		end = min(max(hole, start+1), r.to)
	}
	r.at = end
	return start, end, true
}

// countNewlines counts the newlines in bytes from..to of f, reading only its
// data (a sparse file's holes are zeros), and returns its last byte.
func countNewlines(f *os.File, from, to uint64) (uint64, byte, error) {
	buf := make([]byte, DrainChunk)
	var n uint64
	for r := (dataRegions{f: f, at: from, to: to}); ; {
		start, end, ok := r.next()
		if !ok {
			break
		}
		for p := start; p < end; {
			k := min(end-p, uint64(len(buf)))
			if err := readAt(f, buf[:k], p); err != nil {
				return 0, 0, err
			}
			n += uint64(bytes.Count(buf[:k], []byte{'\n'}))
			p += k
		}
	}
	last := make([]byte, 1)
	if err := readAt(f, last, to-1); err != nil {
		return 0, 0, err
	}
	return n, last[0], nil
}
