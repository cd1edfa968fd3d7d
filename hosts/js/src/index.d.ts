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
  totalBytes?: number;
  markupBytes?: number;
  toolError?: { code: string; message: string };
}

/** The record: what was cut, kept, redacted (WIT `sanitize-record`, snake_case). */
export type SanitizeRecord = Record<string, unknown> & {
  truncated: boolean;
  strategy: string;
  redactions: { rule_id: string; count: number }[];
  output_tokens: number | null;
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
}

export class TimeoutError extends Error {
  code: 'timeout';
}
export class TrapError extends Error {
  code: 'trap';
}
export class SanitizeError extends Error {
  code: 'invalid options' | 'invalid input' | 'invalid rule pack';
}

export class Sanitizer {
  sanitize(input: Uint8Array | string, options?: SanitizeOptions): Promise<Sanitized>;
  sanitizeJson(request: string): Promise<string>;
  effectiveBudget(options?: SanitizeOptions): Promise<Budget>;
  close(): Promise<void>;
}

export interface SanitizerConfig {
  /** A pack component (bytes or path); default: the embedded default pack. */
  pack?: Uint8Array | string;
  /** Wall-clock limit of one call (the worker is terminated), ms. Default 5000. */
  timeoutMs?: number;
  /** Pipeline memory cap, MiB. Default 256. */
  memoryMiB?: number;
  /** Pack memory cap, MiB. Default 32. */
  packMemoryMiB?: number;
}

export function createSanitizer(config?: SanitizerConfig): Promise<Sanitizer>;
