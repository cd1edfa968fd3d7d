// Starts the two edge runtimes on loopback ports for the tests and the
// benchmark: `wasmtime serve` running the wasi:http component
// (`make edge-http`, precompiled) and workerd running the Worker bundle
// (`make edge-worker`) from a capnp config generated here.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..', '..');
const cloudflare = join(here, '..', 'cloudflare');
const WASMTIME = process.env.WASMTIME ?? join(process.env.CARGO_HOME ?? join(process.env.HOME, '.cargo'), 'bin', 'wasmtime');
const WORKERD = join(cloudflare, 'node_modules', '.bin', 'workerd');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(child, base, log) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${log()}`);
    try {
      const r = await fetch(`${base}/v1/healthz`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not answer within 120 s: ${log()}`);
}

async function start(cmd, args, cleanup = () => {}) {
  const port = await freePort();
  const child = spawn(cmd, args(port), { stdio: ['ignore', 'pipe', 'pipe'] });

  let out = '';
  // Kept for a failure message only; the servers never see secrets in
  // their own logs (neither logs bodies).
  child.stdout.on('data', (d) => (out = (out + d).slice(-4000)));
  child.stderr.on('data', (d) => (out = (out + d).slice(-4000)));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(child, base, () => out);
  } finally {
    cleanup(port);
  }
  return { base, pid: child.pid, log: () => out, stop: () => child.kill('SIGTERM') };
}

/**
 * `wasmtime serve` on the precompiled wasi:http component. The pooling
 * allocator is off: the CLI is built without it (Makefile, WASMTIME_FEATURES),
 * and copy-on-write memory images keep a fresh instance per request cheap.
 */
export function startWasmtime() {
  const cwasm = join(repo, 'target', 'edge', 'result-sanitizer-http.cwasm');
  return start(WASMTIME, (port) => ['serve', '--allow-precompiled', '-O', 'pooling-allocator=n', '--addr', `127.0.0.1:${port}`, cwasm]);
}

/** workerd on the Worker bundle, from a generated config. */
export function startWorkerd() {
  const dist = join(cloudflare, 'dist');
  const files = JSON.parse(readFileSync(join(dist, 'modules.json'), 'utf8'));
  const modules = files.map((f) =>
    f.endsWith('.wasm')
      ? `(name = "${f}", wasm = embed "${f}")`
      : `(name = "${f}", esModule = embed "${f}")`,
  );
  return start(WORKERD, (port) => {
    // Beside the bundle (`embed` paths are relative to the config); read
    // at start-up only, so removed once the server answers.
    const config = join(dist, `workerd-${port}.capnp`);
    writeFileSync(
      config,
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [${modules.join(', ')}],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = ["nodejs_compat"],
);
`,
    );
    return ['serve', config];
  }, (port) => rmSync(join(dist, `workerd-${port}.capnp`), { force: true }));
}
