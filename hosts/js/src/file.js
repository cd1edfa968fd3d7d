// A regular file read by offset, as the Rust host's
// `io::read_file_head_tail`: the head from offset 0, the tail from
// `len - tail`, and of the middle only its first `scanBound` bytes go
// through the pipeline's `drain` step; the rest of the middle is counted
// (its bytes, its newlines, its last byte), not drained, `gap.unscanned`
// says how much, and the gap's JSON scans are marked dead.
//
// One difference: Node's fs has no lseek(SEEK_DATA / SEEK_HOLE) (libuv
// declined `uv_fs_lseek`, and WASI's `fd_seek` has only SET, CUR and END),
// so this host cannot see a sparse file's holes. It reads them as the
// zeros they hold: the counts are the same, but reading a 10 GB sparse
// file takes as long as reading 10 GB of zeros, and where the Rust host
// skips a hole inside the scanned bound (and so marks the line and the
// JSON nesting across it unknown) this host drains those zeros. For a
// file without holes the gap, and so the output, is the Rust host's.
import { open } from 'node:fs/promises';

/** How much of a file's middle is scanned (drained) at most: the Rust host's `SCAN_BOUND`. */
export const SCAN_BOUND = 64 << 20;
/** Bytes of the middle sent per `drain` step (as the Rust host). */
export const DRAIN_CHUNK = 1 << 20;
/** Bytes read per step when only counting newlines. */
const COUNT_CHUNK = 8 << 20;

/** A gap after a head of `start` bytes, nothing drained yet. */
export function emptyGap(start) {
  return {
    start_byte: start,
    bytes: 0,
    newlines: 0,
    ends_line: false,
    error_lines: [],
    error_lines_seen: 0,
    redactions: [],
    unfinished: false,
    json: [],
    unscanned: 0,
  };
}

const deadScan = () => ({ in_str: false, esc: false, dead: true, depth: 0, min_depth: 0, commas: 0 });

/** Reads exactly `n` bytes at `position`. */
async function readAt(fh, n, position) {
  const buf = Buffer.allocUnsafe(n);
  let got = 0;
  while (got < n) {
    const { bytesRead } = await fh.read(buf, got, n - got, position + got);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${position + got}`);
    got += bytesRead;
  }
  return buf;
}

/** Reads up to `buf.length` bytes at `position` into `buf` (exactly `n`). */
async function fill(fh, buf, n, position) {
  for (let got = 0; got < n; ) {
    const { bytesRead } = await fh.read(buf, got, n - got, position + got);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${position + got}`);
    got += bytesRead;
  }
  return buf.subarray(0, n);
}

/**
 * Newlines in bytes `from..to` of `fh`, and the last byte: two buffers,
 * one read ahead while the other is counted (memchr, through indexOf).
 */
async function countNewlines(fh, from, to) {
  const bufs = [Buffer.allocUnsafe(COUNT_CHUNK), Buffer.allocUnsafe(COUNT_CHUNK)];
  let n = 0;
  let k = 0;
  let next = fill(fh, bufs[0], Math.min(to - from, COUNT_CHUNK), from);
  for (let p = from; p < to; ) {
    const buf = await next;
    p += buf.length;
    k ^= 1;
    if (p < to) next = fill(fh, bufs[k], Math.min(to - p, COUNT_CHUNK), p);
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  }
  const last = (await readAt(fh, 1, to - 1))[0];
  return { newlines: n, last };
}

/**
 * Reads the regular file `file` (a path or an open FileHandle) of `len`
 * bytes as head + tail by offset. `drain(gap, data, last)` is one `drain`
 * step, returning `[gap, rest]` (the bytes it did not consume). Returns
 * `{ bytes, gap, total, stopped }` as `readHeadTail` does.
 */
export async function readFileHeadTail(file, len, { headBytes: head, tailBytes: tail, scanBound = SCAN_BOUND }, drain) {
  const fh = typeof file === 'string' ? await open(file) : file;
  try {
    if (len <= head + tail) return { bytes: await readAt(fh, len, 0), gap: null, total: len, stopped: false };
    const bytes = await readAt(fh, head, 0);
    const midEnd = len - tail;
    const scanEnd = Math.min(midEnd, head + scanBound);
    let gap = emptyGap(head);
    let pending = Buffer.alloc(0);
    // The first `scanBound` bytes of the middle, drained a chunk at a time.
    for (let off = head; off < scanEnd; ) {
      const n = Math.min(scanEnd - off, DRAIN_CHUNK);
      pending = pending.length ? Buffer.concat([pending, await readAt(fh, n, off)]) : await readAt(fh, n, off);
      off += n;
      if (pending.length >= DRAIN_CHUNK && off < scanEnd) [gap, pending] = await drain(gap, pending, false);
    }
    [gap, pending] = await drain(gap, pending, true);
    if (scanEnd < midEnd) {
      // Past the bound: counted, not scanned.
      const { newlines, last } = await countNewlines(fh, scanEnd, midEnd);
      gap.bytes += midEnd - scanEnd;
      gap.newlines += newlines;
      gap.ends_line = last === 10;
      gap.unscanned = midEnd - scanEnd;
      // Its JSON nesting is not known past the bound.
      if (gap.json.length === 0) gap.json = [deadScan(), deadScan(), deadScan()];
      for (const j of gap.json) j.dead = true;
    }
    const t = await readAt(fh, tail, midEnd);
    return { bytes: Buffer.concat([bytes, t]), gap, total: len, stopped: false };
  } finally {
    if (typeof file === 'string') await fh.close();
  }
}
