/**
 * Where a process's main thread spent its time, from a V8 CPU profile (`node --cpu-prof`):
 *
 *   npx tsx bench/cpu-profile-summary.ts FILE.cpuprofile… [--top 25] [--windows windows.json [--what transfer]]
 *
 * `--windows`: only samples inside the windows of bench/data-plane.ts --sections profile
 * (CLOCK_MONOTONIC µs, the clock of V8's profile timestamps), optionally of one kind.
 * Prints the self time by category (GC, hashing, file system, WebSocket frames, database,
 * …) and the top functions by self time. Native work a JS function calls synchronously
 * (Hash.update, a Buffer copy) counts as that function's self time; work on libuv's thread
 * pool (asynchronous fs writes, fsync) does not appear at all, and the main thread is then
 * idle.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** ws's own functions, recognized by name inside a bundle (where its files are inlined). */
const WS_FUNCTIONS = new Set(['consume', 'concat', 'module.exports.mask', 'module.exports.unmask', '_mask', '_unmask', 'startLoop', 'getData', 'getMask', 'getInfo', 'getPayloadLength16', 'getPayloadLength64', 'dataMessage', 'frame', 'sendFrame', 'receiverOnMessage']);

/** Categories, first match wins: a function's own name and where it lives. */
const CATEGORIES: [string, (f: CallFrame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['(program: V8/native outside JS)', (f) => f.functionName === '(program)'],
  ['hashing (sha256)', (f) => /crypto\/hash|createHash/.test(f.url) || (f.functionName === 'update' && /hash/i.test(f.url)) || /digest/.test(f.functionName)],
  ['file system (write path, fsync, reads)', (f) => /internal\/fs\/|^node:fs$/.test(f.url)],
  ['WebSocket frames (ws)', (f) => /node_modules\/.*ws\/lib|[/\\]ws[/\\]lib/.test(f.url) || (/mm-(agent|server)\.mjs/.test(f.url) && WS_FUNCTIONS.has(f.functionName)) || /^(Receiver|Sender)\./.test(f.functionName) || /bufferutil|mask|unmask/i.test(f.functionName)],
  ['database (postgres, pglite, drizzle)', (f) => /postgres|pglite|drizzle/.test(f.url)],
  ['streams and events (node core)', (f) => /internal\/streams|node:events|internal\/event_target|internal\/process\/task_queues|internal\/timers/.test(f.url)],
  ['net/tls sockets (node core)', (f) => /internal\/(net|tls|stream_base_commons|js_stream_socket)|node:net|_tls_wrap|node:tls/.test(f.url) || f.functionName === 'writeGeneric' || f.functionName === 'writevGeneric'],
  ['buffers (node core)', (f) => /buffer/.test(f.url)],
  ['HTTP (node core, hono)', (f) => /_http_|internal\/http|hono|undici/.test(f.url)],
  ['product code', (f) => /mm-server|mm-agent|packages\//.test(f.url)],
];

const where = (f: CallFrame) => (f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : '');

export interface Window {
  what: string;
  fromUs: number;
  toUs: number;
}

export async function summarizeProfile(file: string, top = 25, windows?: Window[]): Promise<string> {
  const profile = JSON.parse(await fs.readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time between sample i-1 and i: the time of sample i-1 (the last sample gets none).
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (windows && !windows.some((w) => at >= w.fromUs && at <= w.toUs)) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, { us: number; category: string }>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    // A native function (no script: writeBuffer, writev, read …) is told apart by its caller:
    // the same binding name serves sockets and files.
    const native = !f.url && f.functionName !== '' && !f.functionName.startsWith('(');
    const caller = native ? parentOf.get(id)?.callFrame : undefined;
    const categorized = caller ?? f;
    const category = CATEGORIES.find(([, match]) => match(categorized))?.[0] ?? CATEGORIES.find(([, match]) => match(f))?.[0] ?? 'other JS';
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
    const key = caller ? `${f.functionName} ← ${caller.functionName || '(anonymous)'} ${where(caller)}` : `${f.functionName || '(anonymous)'} ${where(f)}`;
    const entry = byFunction.get(key) ?? { us: 0, category };
    entry.us += us;
    byFunction.set(key, entry);
  }
  const busy = total - (byCategory.get('idle') ?? 0);
  const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1)} %`;
  const lines = [`${path.basename(file)}: ${ms(total)} profiled, ${ms(busy)} busy (not idle)`, '', '| category | self time | % of busy |', '|---|---|---|'];
  for (const [c, us] of [...byCategory].sort((a, b) => b[1] - a[1])) if (c !== 'idle') lines.push(`| ${c} | ${ms(us)} | ${pct(us)} |`);
  lines.push('', `| top ${top} functions by self time | category | self | % of busy |`, '|---|---|---|---|');
  for (const [k, v] of [...byFunction].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1].us - a[1].us).slice(0, top))
    lines.push(`| \`${k}\` | ${v.category} | ${ms(v.us)} | ${pct(v.us)} |`);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const valueOf = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
  const top = Number(valueOf('top') ?? 25);
  const windowsFile = valueOf('windows');
  const what = valueOf('what');
  const windows = windowsFile
    ? (JSON.parse(await fs.readFile(windowsFile, 'utf8')) as Window[]).filter((w) => !what || w.what === what)
    : undefined;
  if (files.length === 0) {
    console.error('usage: cpu-profile-summary FILE.cpuprofile… [--top 25]');
    process.exit(2);
  }
  for (const f of files) console.log(`${await summarizeProfile(f, top, windows)}\n`);
}
