#!/usr/bin/env node
// `sanitize` with the Rust CLI's contract: stdin in, the message JSON out
// (one line), typed errors on stderr with exit status 1.
import { parseArgs } from 'node:util';
import { createSanitizer, readPublicKey } from '../src/index.js';

const { values: v } = parseArgs({
  options: {
    tool: { type: 'string', default: '' },
    'call-id': { type: 'string', default: '' },
    format: { type: 'string', default: 'mcp' },
    input: { type: 'string', default: 'raw' },
    'max-bytes': { type: 'string' },
    'max-chars': { type: 'string' },
    'max-tokens': { type: 'string' },
    encoding: { type: 'string', default: 'o200k_base' },
    untrusted: { type: 'boolean', default: false },
    'content-type': { type: 'string' },
    // The name of the file stdin holds: a source file's extension gives
    // the content type (the pipeline's table, as for every host).
    'file-name': { type: 'string' },
    lenient: { type: 'boolean', default: false },
    pii: { type: 'boolean', default: false },
    'pii-public-ip': { type: 'boolean', default: false },
    // As the Rust CLI: --pack must be signed by a --trusted-key (repeat for
    // several) unless --allow-unsigned; --tenant is the tenant it serves.
    pack: { type: 'string' },
    'trusted-key': { type: 'string', multiple: true, default: [] },
    'allow-unsigned': { type: 'boolean', default: false },
    tenant: { type: 'string' },
    'timeout-ms': { type: 'string', default: '5000' },
    'drain-limit': { type: 'string' },
  },
  strict: true,
});

const num = (s) => (s === undefined ? undefined : Number(s));

/** Reads stdin, stopping after `cap` bytes. */
async function readCapped(cap) {
  const chunks = [];
  let n = 0;
  for await (const c of process.stdin) {
    chunks.push(c);
    n += c.length;
    if (n >= cap) break;
  }
  process.stdin.destroy();
  return Buffer.concat(chunks).subarray(0, cap);
}

let s;
try {
  s = await createSanitizer({
    pack: v.pack,
    trustedKeys: v['trusted-key'].map(readPublicKey),
    allowUnsigned: v['allow-unsigned'],
    tenant: v.tenant,
    timeoutMs: Number(v['timeout-ms']),
  });
  const options = {
    tool: v.tool,
    callId: v['call-id'],
    format: v.format,
    input: v.input,
    maxBytes: num(v['max-bytes']),
    maxChars: num(v['max-chars']),
    maxTokens: num(v['max-tokens']),
    encoding: v.encoding,
    untrusted: v.untrusted,
    contentType: v['content-type'],
    fileName: v['file-name'],
    lenient: v.lenient,
    pii: v.pii,
    piiPublicIp: v['pii-public-ip'],
    // stdin is not kept: an omitted part cannot be read back.
    source: 'pipe',
  };
  // The pipeline says how to read: raw output as head + tail
  // (`head_bytes`, `tail_bytes`), documents under `read_bytes` (the markup
  // budget + 1 for declared HTML or JSON, the MCP bound + 1), as for the
  // Rust CLI; MCP input that fills it is refused.
  const { read_bytes: readBytes, head_bytes: headBytes, tail_bytes: tailBytes } = await s.effectiveBudget(options);
  let input;
  if (headBytes > 0) {
    // Raw output: head + tail, the middle drained (as the Rust CLI).
    const drainLimit = v['drain-limit'] === undefined ? undefined : Number(v['drain-limit']);
    const ht = await s.readHeadTail(process.stdin, { headBytes, tailBytes, drainLimit });
    process.stdin.destroy();
    input = ht.bytes;
    options.gap = ht.gap;
  } else {
    input = await readCapped(readBytes);
    if (options.input === 'mcp' && input.length >= readBytes) {
      throw new Error(`invalid input: MCP input larger than ${readBytes - 1} bytes`);
    }
  }
  const out = await s.sanitize(input, options);
  process.stdout.write(out.message + '\n');
  await s.close();
} catch (e) {
  process.stderr.write(`result-sanitizer: error: ${e.message}\n`);
  if (s) await s.close();
  process.exitCode = 1;
}
