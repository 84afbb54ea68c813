/**
 * What reading the board's facts costs the agent (docs/fleet-facts.md). By hand, prints
 * figures; not a test (the tests are packages/agent/test/board-facts.unit.test.ts):
 *
 *   npx tsx bench/board-facts.ts [--root /] [--rounds 200]
 *
 * Collects the facts `--rounds` times from `--root` (default: a simulated KV260 tree, with
 * its FRU EEPROMs) and prints the time per collection (first, p50, p99), the CPU time, and
 * the size of the facts as JSON (what a hello or `board.facts` carries).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BoardFactsCollector } from '../packages/agent/src/board/board-facts.ts';
import { writeSimulatedHostTree } from '../packages/agent/src/simulate/simulated-host-tree.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const rounds = Number(arg('--rounds') ?? 200);
let root = arg('--root');
let scratch: string | undefined;
if (!root) {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-facts-'));
  root = scratch;
  await writeSimulatedHostTree(root, 'kv260');
}
const collector = new BoardFactsCollector({ root, agentDir: os.tmpdir(), activePac: async () => 'bench-pac' });
const times: number[] = [];
const cpu0 = process.cpuUsage();
let facts = {};
for (let i = 0; i < rounds; i++) {
  const t = performance.now();
  facts = await collector.collect();
  times.push(performance.now() - t);
}
const cpu = process.cpuUsage(cpu0);
const sorted = [...times].sort((a, b) => a - b);
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(2);
console.log(`root ${root}${scratch ? ' (simulated KV260)' : ''}, ${rounds} collections`);
console.log(`first ${times[0]!.toFixed(2)} ms (reads the FRU EEPROMs), p50 ${q(0.5)} ms, p99 ${q(0.99)} ms`);
console.log(`CPU ${((cpu.user + cpu.system) / 1000 / rounds).toFixed(2)} ms per collection`);
console.log(`facts: ${Object.keys(facts).length} names, ${Buffer.byteLength(JSON.stringify(facts))} bytes as JSON`);
if (scratch) await fs.rm(scratch, { recursive: true, force: true });
