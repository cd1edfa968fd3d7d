#!/usr/bin/env node
// `sanitize [FILE]` with the Rust CLI's contract: stdin (or FILE) in, the
// message JSON out (one line), typed errors on stderr with exit status 1.
import { open } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createSanitizer, readPublicKey } from '../src/index.js';

const { values: v, positionals } = parseArgs({
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
    // MCP input: how structuredContent over its share is fitted.
    'structured-fit': { type: 'string' },
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
  allowPositionals: true,
});
if (positionals.length > 1) {
  process.stderr.write('result-sanitizer: error: invalid options: one FILE at most\n');
  process.exit(1);
}
// A FILE (not `-`): a regular file's size is the output's size and its
// name gives the content type, as in the Rust CLI; raw output from a
// regular file is read by offset (head, tail, at most 64 MiB of the middle
// drained, the rest counted: `s.readFileHeadTail`), anything else as stdin is.
const file = positionals[0] !== undefined && positionals[0] !== '-' ? positionals[0] : undefined;

const num = (s) => (s === undefined ? undefined : Number(s));

/** Reads `source`, stopping after `cap` bytes. */
async function readCapped(source, cap) {
  const chunks = [];
  let n = 0;
  for await (const c of source) {
    chunks.push(c);
    n += c.length;
    if (n >= cap) break;
  }
  source.destroy();
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
    fileName: v['file-name'] ?? file,
    structuredFit: v['structured-fit'],
    lenient: v.lenient,
    pii: v.pii,
    piiPublicIp: v['pii-public-ip'],
    // stdin is not kept: an omitted part cannot be read back; a file can.
    source: 'pipe',
  };
  let fh;
  if (file !== undefined) {
    fh = await open(file);
    const st = await fh.stat();
    if (st.isFile()) {
      options.source = 'file';
      options.totalBytes = st.size;
    }
  }
  const source = fh === undefined ? process.stdin : fh.createReadStream();
  // The pipeline says how to read: raw output as head + tail
  // (`head_bytes`, `tail_bytes`), documents under `read_bytes` (the markup
  // budget + 1 for declared HTML or JSON, the MCP bound + 1), as for the
  // Rust CLI; MCP input that fills it is refused.
  const { read_bytes: readBytes, head_bytes: headBytes, tail_bytes: tailBytes } = await s.effectiveBudget(options);
  let input;
  if (headBytes > 0 && options.totalBytes !== undefined) {
    // A regular file: head and tail read by offset, the middle scanned up
    // to the bound (as the Rust CLI, which takes no drain limit here).
    const ht = await s.readFileHeadTail(fh, options.totalBytes, { headBytes, tailBytes });
    input = ht.bytes;
    options.gap = ht.gap;
  } else if (headBytes > 0) {
    // Raw output: head + tail, the middle drained (as the Rust CLI).
    const drainLimit = v['drain-limit'] === undefined ? undefined : Number(v['drain-limit']);
    const ht = await s.readHeadTail(source, { headBytes, tailBytes, drainLimit });
    source.destroy();
    input = ht.bytes;
    options.gap = ht.gap;
  } else {
    input = await readCapped(source, readBytes);
    if (options.input === 'mcp' && input.length >= readBytes) {
      throw new Error(`invalid input: MCP input larger than ${readBytes - 1} bytes`);
    }
  }
  source.destroy();
  const out = await s.sanitize(input, options);
  process.stdout.write(out.message + '\n');
  await s.close();
} catch (e) {
  process.stderr.write(`result-sanitizer: error: ${e.message}\n`);
  if (s) await s.close();
  process.exitCode = 1;
}
