// A hard memory cap for a core wasm module: its memory's maximum is set in
// the binary before compiling, so `memory.grow` past the cap fails inside
// the guest (an allocation failure, then a trap), whatever the engine.
// Only the memory section is rewritten; every other byte is copied.

function readLeb(b, i) {
  let v = 0, shift = 0, byte;
  do {
    byte = b[i++];
    v += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [v, i];
}

function leb(v) {
  const out = [];
  do {
    let byte = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) byte |= 0x80;
    out.push(byte);
  } while (v > 0);
  return out;
}

/** `wasm` with every defined 32-bit memory capped at `maxBytes`. */
export function capMemory(wasm, maxBytes) {
  const b = new Uint8Array(wasm);
  const maxPages = Math.max(1, Math.floor(maxBytes / 65536));
  const parts = [b.subarray(0, 8)];
  let i = 8;
  while (i < b.length) {
    const id = b[i];
    const [size, start] = readLeb(b, i + 1);
    const end = start + size;
    if (id !== 5) {
      parts.push(b.subarray(i, end));
      i = end;
      continue;
    }
    let [count, j] = readLeb(b, start);
    const body = [...leb(count)];
    for (let k = 0; k < count; k++) {
      const flags = b[j++];
      if (flags > 1) throw new Error('memory-cap: only 32-bit, unshared memories are supported');
      let min, max;
      [min, j] = readLeb(b, j);
      if (flags === 1) [max, j] = readLeb(b, j);
      const capped = Math.max(min, Math.min(max ?? maxPages, maxPages));
      body.push(1, ...leb(min), ...leb(capped));
    }
    parts.push(Uint8Array.of(5, ...leb(body.length), ...body));
    i = end;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
