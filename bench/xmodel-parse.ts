/**
 * What reading an `.xmodel` costs the control plane (docs/accelerators.md, "The model's
 * needs"). By hand, prints figures; not a test (the tests are
 * packages/server/test/xmodel-parser.unit.test.ts and xmodel-large.test.ts):
 *
 *   npx tsx bench/xmodel-parse.ts [--sizes 20,200,1000] [--chunk 1048576] [--rounds 3] [--file model.xmodel]
 *
 * Writes a model of each size (MB; three quarters weights in const ops, a quarter parameters
 * of its DPU subgraph, as compiled models carry them) into a temporary folder, or takes
 * `--file`, then reads it `--rounds` times, each in a process of its own
 * (test/support/xmodel-parse-child.ts), and prints the time, the throughput and the process's
 * peak RSS (the kernel's maxrss) over its RSS before the read.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { FINGERPRINT_B4096, writeXmodel } from '../test/support/xmodel-builder.ts';

const run = promisify(execFile);
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const MB = 1000 * 1000;
const sizes = (arg('--sizes') ?? '20,200,1000').split(',').map(Number);
const chunk = arg('--chunk') ?? String(1024 * 1024);
const rounds = Number(arg('--rounds') ?? 3);
const child = fileURLToPath(new URL('../test/support/xmodel-parse-child.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-xmodel-'));
try {
  const files: string[] = [];
  const given = arg('--file');
  if (given) files.push(given);
  else {
    for (const size of sizes) {
      const file = path.join(dir, `model-${size}MB.xmodel`);
      await writeXmodel(file, {
        name: `bench-${size}`,
        inputs: [{ name: 'input_0', shape: [1, 640, 640, 3] }],
        dpuSubgraphs: [{ name: 'subgraph_backbone', fingerprint: FINGERPRINT_B4096, parameterBytes: Math.round((size * MB) / 4), codeBytes: 2 * MB }],
        cpuSubgraphs: ['subgraph_nms'],
        weightBytes: Math.round((size * MB * 3) / 4) - 2 * MB,
      });
      files.push(file);
    }
  }
  console.log(`chunk ${chunk} bytes, ${rounds} rounds each, node ${process.version}, ${os.cpus().length} cores`);
  console.log('file size MB | ms (median) | MB/s | RSS before MB | peak RSS MB | peak - before MB');
  for (const file of files) {
    const reports: Array<{ size: number; ms: number; rss_before_bytes: number; peak_rss_bytes: number }> = [];
    for (let i = 0; i < rounds; i++) {
      const { stdout } = await run(process.execPath, ['--import', tsx, child, file, chunk], { maxBuffer: 1024 * 1024 });
      reports.push(JSON.parse(stdout));
    }
    const median = <T>(xs: T[], f: (x: T) => number) => [...xs].map(f).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const size = reports[0]!.size;
    const ms = median(reports, (r) => r.ms);
    const before = median(reports, (r) => r.rss_before_bytes);
    const peak = median(reports, (r) => r.peak_rss_bytes);
    const growth = median(reports, (r) => r.peak_rss_bytes - r.rss_before_bytes);
    console.log(`${(size / MB).toFixed(0).padStart(12)} | ${ms.toFixed(0).padStart(11)} | ${((size / MB) / (ms / 1000)).toFixed(0).padStart(4)} | ${(before / MB).toFixed(0).padStart(13)} | ${(peak / MB).toFixed(0).padStart(11)} | ${(growth / MB).toFixed(0).padStart(16)}`);
  }
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
