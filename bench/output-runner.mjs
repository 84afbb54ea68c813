// A runner (MM_RUNNER) for bench/data-plane.ts: "makes" an output video of new content by
// copying MM_BENCH_OUTPUT_SOURCE to $MM_OUTPUT_DIR/output.mp4 and stamping its first 16
// bytes, then prints `bench-output-ready <epoch ms>` so the benchmark can time the way back
// (agent hashes it into its cache, the server pulls, verifies and stores it).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

const source = process.env.MM_BENCH_OUTPUT_SOURCE;
const outDir = process.env.MM_OUTPUT_DIR;
if (!source || !outDir) {
  console.error('MM_BENCH_OUTPUT_SOURCE and MM_OUTPUT_DIR must be set');
  process.exit(2);
}
const out = path.join(outDir, 'output.mp4');
await fs.copyFile(source, out);
const handle = await fs.open(out, 'r+');
await handle.write(randomBytes(16), 0, 16, 0);
await handle.close();
console.log(`bench-output-ready ${Date.now()}`);
