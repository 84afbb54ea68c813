import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import preact from '@preact/preset-vite';
import { defineConfig, type Plugin } from 'vite';

/** Writes `<file>.gz` beside each built text file: the server sends it to clients that accept gzip. */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'mm-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = path.resolve(c.root, c.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name)) : [path.join(dir, d.name)]));
      for (const file of walk(outDir)) {
        if (!/\.(js|css|html|svg|json|wasm)$/.test(file)) continue;
        fs.writeFileSync(`${file}.gz`, zlib.gzipSync(fs.readFileSync(file), { level: 9 }));
      }
    },
  };
}

// `vite` (dev) proxies the API to a control plane on :8000 (`pnpm start`), presenting itself
// as that origin so the server's host and same-origin checks accept the requests.
export default defineConfig({
  plugins: [preact(), precompress()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', target: 'es2022', sourcemap: false },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8000', changeOrigin: true, headers: { origin: 'http://127.0.0.1:8000' } } } },
});
