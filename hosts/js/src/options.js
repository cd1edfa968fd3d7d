// Options as JavaScript callers write them, to the JSON twin's options.
// The twin spells field names and enum cases alike in snake_case (the WIT
// names, docs/record.schema.json), so enum values pass through unchanged:
// `format: 'openai'` is `"format": "openai"`. Only field names are mapped
// (`callId` to `call_id`); enum values are checked here so that a typo is
// a TypeError naming the choices rather than the pipeline's error.

const FORMATS = ['mcp', 'openai', 'anthropic'];
const INPUTS = ['raw', 'mcp'];
const ENCODINGS = ['o200k_base', 'cl100k_base'];
const SOURCES = ['tool', 'file', 'pipe'];
const STRUCTURED_FITS = ['marked', 'schema', 'omitted'];

function pick(cases, value, what) {
  if (!cases.includes(value)) throw new TypeError(`unknown ${what} ${JSON.stringify(value)}; expected one of ${cases.join(', ')}`);
  return value;
}

// Plain fields: twin name, JavaScript name.
const FIELDS = [
  ['tool', 'tool'],
  ['call_id', 'callId'],
  ['max_bytes', 'maxBytes'],
  ['max_chars', 'maxChars'],
  ['head_chars', 'headChars'],
  ['tail_chars', 'tailChars'],
  ['max_tokens', 'maxTokens'],
  ['untrusted', 'untrusted'],
  ['content_type', 'contentType'],
  ['file_name', 'fileName'],
  ['lenient', 'lenient'],
  ['pii', 'pii'],
  ['pii_public_ip', 'piiPublicIp'],
  ['total_bytes', 'totalBytes'],
  ['markup_bytes', 'markupBytes'],
  // The drained middle, as `readHeadTail` returns it (the twin's own JSON).
  ['gap', 'gap'],
];

/** `{tool, callId, format, input, maxBytes, ...}` to twin options. */
export function twinOptions(o = {}) {
  const t = {};
  for (const [twin, js] of FIELDS) {
    if (o[js] !== undefined && o[js] !== null) t[twin] = o[js];
  }
  if (o.format !== undefined) t.format = pick(FORMATS, o.format, 'format');
  if (o.input !== undefined) t.input = pick(INPUTS, o.input, 'input');
  if (o.encoding !== undefined) t.encoding = pick(ENCODINGS, o.encoding, 'encoding');
  if (o.source !== undefined) t.source = pick(SOURCES, o.source, 'source');
  if (o.structuredFit !== undefined) t.structured_fit = pick(STRUCTURED_FITS, o.structuredFit, 'structuredFit');
  if (o.toolError) t.tool_error = { code: o.toolError.code, message: o.toolError.message };
  return t;
}

/** The twin request for `input` (bytes or string) and options. */
export function twinRequest(input, options) {
  const req = {};
  if (typeof input === 'string') {
    req.input = input;
  } else {
    const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const text = bytes.toString('utf8');
    // Exact UTF-8 travels as text; anything else as base64.
    if (Buffer.from(text, 'utf8').equals(bytes)) req.input = text;
    else req.input_base64 = bytes.toString('base64');
  }
  req.options = twinOptions(options);
  return JSON.stringify(req);
}
