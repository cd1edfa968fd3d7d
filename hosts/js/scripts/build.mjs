// Transpiles the pipeline, the default pack and the verifier components (built by
// `make build` into target/components) with jco, for `instantiate`-style
// linking: the pack's exports become the pipeline's imports at run time.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { transpileComponent } from '../src/transpile.js';

const here = dirname(fileURLToPath(import.meta.url));
const components = join(here, '..', '..', '..', 'target', 'components');
const dist = join(here, '..', 'dist');

const parts = [
  ['pipeline', 'pipeline.wasm', 'pipeline', 'async'],
  ['pack', 'default-pack.wasm', 'default-pack', 'async'],
  ['verifier', 'verifier.wasm', 'verifier', 'sync'],
];
for (const [name, file, dir, instantiation] of parts) {
  const t0 = Date.now();
  const out = join(dist, dir);
  await transpileComponent(readFileSync(join(components, file)), name, out, instantiation);
  console.log(`transpiled ${file} -> ${out} in ${Date.now() - t0} ms`);
}
