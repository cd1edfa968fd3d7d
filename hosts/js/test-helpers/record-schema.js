// The record schema (docs/record.schema.json, draft 2020-12), for the
// tests: every record the JS host emits is validated against it. This
// lives outside test/ so that `node --test test/` does not run it as a
// test file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';

const here = dirname(fileURLToPath(import.meta.url));
const schema = JSON.parse(readFileSync(join(here, '..', '..', '..', 'docs', 'record.schema.json'), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

/** The schema errors of `record` (an object), or null when it is valid. */
export function recordErrors(record) {
  return validate(record) ? null : validate.errors;
}

/** Fails unless `record` (an object) matches the schema. */
export function checkRecord(record, what) {
  const errors = recordErrors(record);
  assert.equal(errors, null, `${what}: the record does not match docs/record.schema.json: ${JSON.stringify(errors)}`);
}

/**
 * The record a tool message (a JSON string) carries: in the MCP result's
 * `_meta["result-sanitizer/record"]`, or next to an OpenAI / Anthropic
 * message as `record`.
 */
export function messageRecord(message, what) {
  const m = JSON.parse(message);
  const record = m._meta?.['result-sanitizer/record'] ?? m.record;
  assert.ok(record && typeof record === 'object', `${what}: the message carries no record`);
  return record;
}

/** Validates a result's record and the one in its message (the same). */
export function checkSanitized(out, what) {
  checkRecord(out.record, what);
  const inner = messageRecord(out.message, what);
  checkRecord(inner, `${what} (in the message)`);
  assert.deepEqual(inner, out.record, `${what}: the message's record differs from the result's`);
}

/** Validates the record of a JSON twin response string (an Err has none). */
export function checkResponse(response, what) {
  const r = JSON.parse(response);
  if (r.Ok) checkSanitized({ message: r.Ok.message, record: r.Ok.record }, what);
}
