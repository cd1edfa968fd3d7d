// Bundles the Worker into dist/: the edge component (target/edge/
// result-sanitizer.wasm, from `make edge`) transpiled by jco (hosts/js's
// pinned jco-transpile), the glue (src/worker.js), and modules.js, which
// imports each core wasm module so that the bundler (wrangler) or
// workerd's config ships them as compiled modules: Workers cannot compile
// wasm at run time. Prints the bundle's size next to the Workers limits.
import { readFileSync, readdirSync, writeFileSync, copyFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { transpileComponent } from '../../../../hosts/js/src/transpile.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dist = join(root, 'dist');
const edge = join(root, '..', '..', '..', 'target', 'edge', 'result-sanitizer.wasm');

await transpileComponent(readFileSync(edge), 'edge', dist);
// jco inlines small helper modules (JSPI trampolines) as byte arrays
// compiled at instantiation; Workers refuse that ("Wasm code generation
// disallowed by embedder"), so each goes to its own .wasm file, bundled
// like the others and taken from `getCoreModule`.
let js = readFileSync(join(dist, 'edge.js'), 'utf8');
let inline = 0;
js = js.replace(/new WebAssembly\.Module\(new Uint8Array\(\[([0-9a-fx,\s]+)\]\)\)/g, (_, bytes) => {
  const name = `edge.inline${++inline}.wasm`;
  writeFileSync(join(dist, name), Uint8Array.from(bytes.split(',').map((b) => b.trim()).filter(Boolean).map(Number)));
  return `getCoreModule('${name}')`;
});
if (js.includes('new WebAssembly.Module(')) throw new Error('edge.js still compiles wasm at run time');
writeFileSync(join(dist, 'edge.js'), js);
copyFileSync(join(root, 'src', 'worker.js'), join(dist, 'worker.js'));
const wasm = readdirSync(dist).filter((f) => f.endsWith('.wasm')).sort();
const lines = wasm.map((f, i) => `import m${i} from './${f}';`);
lines.push(`export const modules = { ${wasm.map((f, i) => `'${f}': m${i}`).join(', ')} };`);
writeFileSync(join(dist, 'modules.js'), lines.join('\n') + '\n');

// What a deploy uploads: the modules, each compressed on its own as an
// estimate of the compressed total Cloudflare checks.
const files = ['worker.js', 'edge.js', 'modules.js', ...wasm];
let raw = 0;
let gz = 0;
for (const f of files) {
  const b = readFileSync(join(dist, f));
  raw += statSync(join(dist, f)).size;
  gz += gzipSync(b, { level: 9 }).length;
}
writeFileSync(join(dist, 'modules.json'), JSON.stringify(files) + '\n');
const mib = (n) => (n / 1048576).toFixed(2);
console.log(`worker bundle: ${raw} bytes (${mib(raw)} MiB), ${gz} bytes gzip -9 (${mib(gz)} MiB); ` +
  `Workers limits (compressed): free 3 MiB ${gz <= 3 << 20 ? 'fits' : 'exceeded'}, paid 10 MiB ${gz <= 10 << 20 ? 'fits' : 'exceeded'}`);
