// One live instance: the platform pack's instance, the tenant pack's (the
// same one when no tenant pack was given), and a pipeline instance whose
// `platform` and `rule-pack` imports are their exports. It runs in a worker thread so
// that the main thread can bound a call's wall-clock time by terminating
// it. Both core memories are capped in the binary (see memory-cap.js).
import { parentPort, workerData } from 'node:worker_threads';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { capMemory } from './memory-cap.js';
import { WIT_VERSION } from './signing.js';

const { pipelineDir, packDir, platformDir, memoryBytes, packMemoryBytes, grant } = workerData;

async function load(dir, name, cap) {
  const { instantiate } = await import(pathToFileURL(join(dir, `${name}.js`)).href);
  return { instantiate, getCoreModule: async (p) => WebAssembly.compile(capMemory(await readFile(join(dir, p)), cap)) };
}

const RULE_PACK = `result-sanitizer:core/rule-pack@${WIT_VERSION}`;
const PLATFORM = `result-sanitizer:core/platform@${WIT_VERSION}`;
const PIPELINE = `result-sanitizer:core/result-sanitizer@${WIT_VERSION}`;

async function packExports(dir) {
  const pack = await load(dir, 'pack', packMemoryBytes);
  return (await pack.instantiate(pack.getCoreModule, {}))[RULE_PACK];
}

// A rule set's `relax` keeps only what the tenant's signed manifest grants;
// the platform's own is emptied (as the Rust host's forwarders do). Rule
// descriptions go too: the pipeline never reads them, and lowered they cost
// each instance ~65 KB for the default rules.
const relaxOnly = (p, ids) => ({
  ...p,
  rules: () => {
    const r = p.rules();
    return {
      ...r,
      rules: r.rules.map((rule) => ({ ...rule, description: '' })),
      relax: r.relax.filter((id) => ids.includes(id)),
    };
  },
});
const tenant = await packExports(packDir);
const platform = platformDir === packDir ? tenant : await packExports(platformDir);
const pipeline = await load(pipelineDir, 'pipeline', memoryBytes);
// jco names an import by its unversioned interface name.
const root = await pipeline.instantiate(pipeline.getCoreModule, {
  [PLATFORM.split('@')[0]]: relaxOnly(platform, []),
  [RULE_PACK.split('@')[0]]: relaxOnly(tenant, grant ?? []),
});
const api = root[PIPELINE];

parentPort.on('message', ({ id, call, arg }) => {
  try {
    const out =
      call === 'budget' ? api.effectiveBudgetJson(arg) : call === 'drain' ? api.drainJson(arg) : api.sanitizeJson(arg);
    parentPort.postMessage({ id, ok: out });
  } catch (e) {
    // A trap (unreachable, out of memory): this instance must not be
    // entered again; the main thread replaces the worker.
    parentPort.postMessage({ id, trap: String(e && e.message ? e.message : e) });
  }
});
parentPort.postMessage({ ready: true });
