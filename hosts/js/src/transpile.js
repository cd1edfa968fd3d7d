// jco transpilation of a component into ES modules with an `instantiate`
// function (imports supplied at instantiation). Node only: browsers and
// Workers cannot compile fetched wasm at run time, so there the output of
// `npm run build` (or of this function, run ahead of time) is bundled.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, existsSync, renameSync, rmSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { transpileBytes } from '@bytecodealliance/jco-transpile';

/**
 * Transpiles `bytes` into `outDir` (files `<name>.js`, `<name>.core*.wasm`);
 * `instantiation` is 'async' (the pipeline and packs, compiled in a worker)
 * or 'sync' (the verifier, small enough to compile where it is called).
 */
export async function transpileComponent(bytes, name, outDir, instantiation = 'async') {
  const { files } = await transpileBytes(new Uint8Array(bytes), { name, instantiation, noTypescript: false });
  const tmp = `${outDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  for (const [file, data] of Object.entries(files)) {
    const path = join(tmp, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, data);
  }
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(dirname(outDir), { recursive: true });
  renameSync(tmp, outDir);
  return outDir;
}

/** The default cache: per user, under the OS temp dir. */
export const PACK_CACHE = join(tmpdir(), `result-sanitizer-js-${process.getuid?.() ?? 'user'}`);

/**
 * Transpiles a pack component once per content (cached by sha256 in
 * `cacheDir`) and returns the directory holding `pack.js`. The cached code
 * runs as this process and stands for a verified pack, so the cache must
 * be this user's own directory, writable by no one else (the temp dir is
 * shared: anyone could plant `<sha>/pack.js` in a directory of theirs).
 */
export async function transpilePack(bytes, cacheDir = PACK_CACHE) {
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const st = lstatSync(cacheDir);
  if (!st.isDirectory() || (process.getuid && (st.uid !== process.getuid() || (st.mode & 0o022) !== 0))) {
    throw new Error(`${cacheDir} is not a directory of this user's, writable by it alone; not used as the pack cache`);
  }
  const sha = createHash('sha256').update(bytes).digest('hex');
  const out = join(cacheDir, sha);
  if (!existsSync(join(out, 'pack.js'))) {
    await transpileComponent(bytes, 'pack', out);
  }
  return out;
}
