/** Options of one call; unset budgets come from the pack, then the defaults. */
export interface SanitizeOptions {
  tool?: string;
  callId?: string;
  format?: 'mcp' | 'openai' | 'anthropic';
  input?: 'raw' | 'mcp';
  maxBytes?: number;
  maxChars?: number;
  headChars?: number;
  tailChars?: number;
  maxTokens?: number;
  encoding?: 'o200k_base' | 'cl100k_base';
  untrusted?: boolean;
  contentType?: string;
  lenient?: boolean;
  /** Redact personal data (emails, phone numbers, cards, IBANs, SSNs, private IPs, dates of birth). */
  pii?: boolean;
  /** With `pii`: public IP addresses too. */
  piiPublicIp?: boolean;
  totalBytes?: number;
  markupBytes?: number;
  toolError?: { code: string; message: string };
  /** Where the output came from: the recovery route its markers name. */
  source?: 'tool' | 'file' | 'pipe';
  /** MCP `structuredContent` over its share: thinned with notes inside, keeping a schema's shape, or left out (WIT `structured-fit`). */
  structuredFit?: 'marked' | 'schema' | 'omitted';
  /** The drained middle, as `readHeadTail` returns it. */
  gap?: Gap | null;
}

/** The middle of a long output, drained (WIT `gap`; snake_case, as the twin's JSON). */
export interface Gap {
  start_byte: number;
  bytes: number;
  newlines: number;
  ends_line: boolean;
  error_lines: { line: number; text: string; cut: boolean }[];
  error_lines_seen: number;
  redactions: { rule_id: string; count: number }[];
  unfinished: boolean;
  /** The JSON scans carried across the middle (opaque to a host; start empty). */
  json: Record<string, unknown>[];
  /** Bytes of the middle counted but not scanned (a file read by offset past SCAN_BOUND). */
  unscanned: number;
}

/** What `readHeadTail` kept of an output. */
export interface HeadTail {
  /** The head, then the tail: the input to sanitize. */
  bytes: Buffer;
  /** The drained middle (pass it as the `gap` option), or null when the output fit. */
  gap: Gap | null;
  /** Bytes read in all. */
  total: number;
  /** Reading stopped at the drain limit. */
  stopped: boolean;
}

/** Where triage put the input (WIT `content-class`). */
export type ContentClass = 'text' | 'binary' | 'mcp' | 'empty' | 'json' | 'json_lines' | 'csv' | 'html' | 'code';

/** How the kept text was chosen (WIT `strategy`). */
export type Strategy =
  | 'none'
  | 'head_tail_lines'
  | 'head_tail_chars'
  | 'omitted'
  | 'json_structure'
  | 'records'
  | 'head_tail_errors';

/** A pipeline stage (WIT `stage`), as a record's `stages[].stage` names it. */
export type Stage =
  | 'triage'
  | 'html'
  | 'byte_cap'
  | 'redact'
  | 'json_structure'
  | 'records'
  | 'char_budget'
  | 'token_budget'
  | 'wrap';

/**
 * The record: what was cut, kept, redacted (WIT `sanitize-record`). Field
 * names and enum cases are snake_case (`"strategy": "head_tail_lines"`,
 * `"encoding": "o200k_base"`); docs/record.schema.json is the full schema.
 */
export type SanitizeRecord = Record<string, unknown> & {
  class: ContentClass;
  truncated: boolean;
  strategy: Strategy;
  encoding: 'o200k_base' | 'cl100k_base';
  redactions: { rule_id: string; count: number }[];
  output_tokens: number | null;
  stages: { stage: Stage; bytes_in: number; bytes_out: number }[];
};

export interface Sanitized {
  /** The tool message as a JSON string, ready to send. */
  message: string;
  record: SanitizeRecord;
  isError: boolean;
}

export interface Budget {
  max_bytes: number;
  max_chars: number;
  head_chars: number;
  tail_chars: number;
  max_tokens: number;
  markup_bytes: number;
  /**
   * How many bytes of the output a host reads for these options: the byte
   * cap + 1, the markup budget + 1 for a declared text/html content type,
   * the MCP input bound (64 MiB) + 1 for MCP input, which a host refuses
   * when it reads that many.
   */
  read_bytes: number;
  /** Bytes of the start kept when a longer raw output is read as head + tail; 0: read it whole. */
  head_bytes: number;
  /** Bytes of the end kept then. */
  tail_bytes: number;
}

export class TimeoutError extends Error {
  code: 'timeout';
}
export class TrapError extends Error {
  code: 'trap';
}
/**
 * The pipeline refused the call. `code` is the kind; the JSON twin's
 * `{"Err": {...}}` spells them `invalid_options`, `invalid_input`,
 * `invalid_pack`.
 */
export class SanitizeError extends Error {
  code: 'invalid options' | 'invalid input' | 'invalid rule pack';
}

export class Sanitizer {
  sanitize(input: Uint8Array | string, options?: SanitizeOptions): Promise<Sanitized>;
  sanitizeJson(request: string): Promise<string>;
  effectiveBudget(options?: SanitizeOptions): Promise<Budget>;
  /** Reads an output as head + tail, the middle drained through the pipeline. Default drain limit 1 GiB. */
  readHeadTail(
    source: AsyncIterable<Uint8Array>,
    limits: { headBytes: number; tailBytes: number; drainLimit?: number },
  ): Promise<HeadTail>;
  /**
   * A regular file (a path or an open FileHandle) of `size` bytes read by
   * offset: head from 0, tail from `size - tailBytes`, only the first
   * `scanBound` (default SCAN_BOUND) bytes of the middle drained, the rest
   * counted into the gap (`unscanned`). A sparse file's holes are read as zeros.
   */
  readFileHeadTail(
    file: string | import('node:fs/promises').FileHandle,
    size: number,
    limits: { headBytes: number; tailBytes: number; scanBound?: number },
  ): Promise<HeadTail>;
  close(): Promise<void>;
}

/** How a pack was refused, before anything was compiled (the Rust host's `Refusal` kinds). */
export type PackRefusal =
  | 'malformed'
  | 'unsigned'
  | 'incompatible_wit'
  | 'untrusted_key'
  | 'tampered'
  | 'expired'
  | 'wrong_tenant'
  | 'invalid_trusted_key';

/** `message` is the verifier's sentence, the same in every host. */
export class PackRefusedError extends Error {
  code: PackRefusal;
}

/** A trusted Ed25519 public key (`keyId`: first 16 hex of its sha256; `text`: the `.pub` text). */
export interface PublicKey {
  keyId: string;
  text: string;
}
/** Parses a `.pub` file's text (`result-sanitizer-ed25519-public <hex>`). */
export function parsePublicKey(text: string): PublicKey;
export function readPublicKey(path: string): PublicKey;

export interface TrustOptions {
  /** Keys trusted to sign packs (several for rotation): parsed keys or `.pub` texts. */
  trustedKeys?: (PublicKey | string)[];
  /** Accept unsigned packs (development only). Default false. */
  allowUnsigned?: boolean;
  /** The tenant the pack serves; unset, any scope passes. */
  tenant?: string;
  /** The time expiry is checked against (Date or ms; to the second). Default now. */
  now?: Date | number;
}

/** The pack's manifest and, when signed, the signed manifest. */
export interface VerifiedPack {
  manifest: { name: string; version: string; tenant: string; wit_version: string; rule_ids: string[]; has_detect: boolean };
  signed: null | {
    name: string;
    version: string;
    tenant: string;
    wit_version: string;
    expires?: string | null;
    key_id: string;
    sha256: string;
    may_relax?: string[];
  };
}

/** Verifies a pack component's bytes; throws PackRefusedError. Compiles nothing. */
export function verifyPack(bytes: Uint8Array, trust?: TrustOptions): VerifiedPack;

export interface SanitizerConfig extends TrustOptions {
  /**
   * The tenant's pack component (bytes or path), verified under the trust options
   * before it is transpiled; default: the default pack built with this
   * package, not verified.
   */
  pack?: Uint8Array | string;
  /** The platform's pack, whose rules apply whatever `pack` says; default: the embedded default pack. */
  platformPack?: Uint8Array | string;
  /** Wall-clock limit of one call (the worker is terminated), ms. Default 5000. */
  timeoutMs?: number;
  /** Pipeline memory cap, MiB. Default 256. */
  memoryMiB?: number;
  /** Pack memory cap, MiB. Default 32. */
  packMemoryMiB?: number;
}

/** Reading stops after this many bytes by default. */
export const DEFAULT_DRAIN_LIMIT: number;
/** How much of a file's middle `readFileHeadTail` scans at most (64 MiB, as the Rust host). */
export const SCAN_BOUND: number;

export function createSanitizer(config?: SanitizerConfig): Promise<Sanitizer>;
