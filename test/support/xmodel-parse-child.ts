/**
 * Parses one `.xmodel` in a process of its own and prints, as one JSON line, what the reader
 * found and what it cost: the process's peak resident memory (the kernel's `maxrss`) before
 * and after, and the time. Used by the bounded-memory test and by bench/xmodel-parse.ts:
 *
 *   node --import tsx test/support/xmodel-parse-child.ts <file> [chunk bytes]
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { parseXmodel } from '../../packages/server/src/accelerators/xmodel-parser.ts';

const [file, chunk] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: xmodel-parse-child.ts <file> [chunk bytes]\n');
  process.exit(2);
}
const { size } = await stat(file);
const rssBeforeKib = process.resourceUsage().maxRSS;
const started = process.hrtime.bigint();
const summary = await parseXmodel(createReadStream(file, { highWaterMark: chunk ? Number(chunk) : 1024 * 1024 }));
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const peakKib = process.resourceUsage().maxRSS;
process.stdout.write(`${JSON.stringify({ size, ms, rss_before_bytes: rssBeforeKib * 1024, peak_rss_bytes: peakKib * 1024, summary })}\n`);
