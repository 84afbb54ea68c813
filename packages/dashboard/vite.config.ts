import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// `vite` (dev) proxies the API to a control plane on :8000 (`pnpm start`).
export default defineConfig({
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', target: 'es2022', sourcemap: false },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8000', changeOrigin: false } } },
});
