// Transpiles the pipeline and the default pack components (built by
// `make build` into target/components) with jco, for `instantiate`-style
// linking: the pack's exports become the pipeline's imports at run time.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { transpileComponent } from '../src/transpile.js';

const here = dirname(fileURLToPath(import.meta.url));
const components = join(here, '..', '..', '..', 'target', 'components');
const dist = join(here, '..', 'dist');

for (const [name, file] of [['pipeline', 'pipeline.wasm'], ['pack', 'default-pack.wasm']]) {
  const t0 = Date.now();
  const out = join(dist, name === 'pack' ? 'default-pack' : name);
  await transpileComponent(readFileSync(join(components, file)), name, out);
  console.log(`transpiled ${file} -> ${out} in ${Date.now() - t0} ms`);
}
