// CPU time per request in each edge runtime (`make edge-bench`): the
// server process's own CPU (user + system, /proc/PID/stat) over many
// sequential `POST /v1/sanitize` requests, per result size, after a
// warm-up; next to the platforms' CPU limits per request (Cloudflare
// Workers free 10 ms, Fastly Compute 50 ms). The client runs in this
// process, so its own work is not counted.
//
//   node examples/edge/test/bench.mjs [--quick]
import { readFileSync } from 'node:fs';
import { startWasmtime, startWorkerd } from './servers.mjs';

const TICKS = 100; // USER_HZ: the unit of /proc/PID/stat times on Linux
const quick = process.argv.includes('--quick');
const SIZES = [1, 8, 64, 256];
const COUNT = { 1: 400, 8: 300, 64: 100, 256: 40 };

function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime), counted from after the name.
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
}

/** A build log of `kib` KiB, with a secret every ~4 KiB (work for the redaction). */
function result(kib) {
  const lines = [];
  let n = 0;
  for (let i = 0; n < kib * 1024; i++) {
    let l = `[${String(i).padStart(6, '0')}] Compiling crate-${i % 97} v0.${i % 11}.${i % 7} (/src/crate-${i % 97})`;
    if (i % 50 === 7) l = `export DB_PASSWORD=Hq7wLm${String(i).padStart(6, '0')}zz`;
    if (n + l.length + 1 > kib * 1024) l = 'x'.repeat(Math.max(0, kib * 1024 - n - 1));
    lines.push(l);
    n += l.length + 1;
  }
  return Buffer.from(lines.join('\n') + '\n').subarray(0, kib * 1024);
}

async function measure(server, body, count) {
  const post = async () => {
    const r = await fetch(`${server.base}/v1/sanitize?tool=build`, { method: 'POST', body });
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    await r.arrayBuffer();
  };
  for (let i = 0; i < 5; i++) await post();
  const c0 = cpuMs(server.pid);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await post();
  return { cpu: (cpuMs(server.pid) - c0) / count, wall: (performance.now() - t0) / count };
}

const rows = [];
const only = process.env.EDGE_RUNTIMES;
for (const [name, start] of [
  ['wasmtime serve', startWasmtime],
  ['workerd', startWorkerd],
].filter(([n]) => !only || n.startsWith(only))) {
  const server = await start();
  try {
    for (const kib of SIZES) {
      const count = quick ? Math.ceil(COUNT[kib] / 10) : COUNT[kib];
      const m = await measure(server, result(kib), count);
      rows.push({ name, kib, count, ...m });
      console.error(`${name} ${kib} KiB: ${m.cpu.toFixed(2)} ms CPU, ${m.wall.toFixed(2)} ms wall per request (${count})`);
    }
  } finally {
    server.stop();
  }
}

const fit = (ms, limit) => (ms <= limit ? 'yes' : 'no');
console.log('| runtime | result | requests | CPU per request | wall per request | Cloudflare free (10 ms) | Fastly (50 ms) |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.name} | ${r.kib} KiB | ${r.count} | ${r.cpu.toFixed(2)} ms | ${r.wall.toFixed(2)} ms | ${fit(r.cpu, 10)} | ${fit(r.cpu, 50)} |`,
  );
}
