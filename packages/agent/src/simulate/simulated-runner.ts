/**
 * The simulated board's runner (`mm-agent --simulate`): a real program the agent starts
 * like any MM_RUNNER, so cancel, timeout and process groups are exercised for real.
 *
 * It makes a playable H.264 MP4 (320×240, 15 fps, 3 s) in MM_OUTPUT_DIR/output.mp4 whose
 * pictures are drawn from the bytes of MM_INPUT_VIDEO (or from the invocation's name when
 * there is no input video). When MM_PARAMETER is a JSON object it honours:
 *
 *   duration_s      how long the run takes (default 1), with a progress line about every second
 *   exit_code       how it ends (default 0); non-zero exits with it, making no video
 *   output_video    false: exit 0 without making a video (default true)
 *   spawn_children  start this many helper processes that live until the runner ends
 *                   (default 0; their pids are printed), to check cancel ends the whole group
 *   ignore_sigterm  true: ignore SIGTERM, so only the SIGKILL after the grace period stops it
 *   metrics_json    text to leave as MM_OUTPUT_DIR/metrics.json instead of its own (to try bad ones)
 *
 * On success it leaves MM_OUTPUT_DIR/metrics.json with `fps` = 30 × speed and
 * `latency_ms` = 1000 / fps, where speed is the board's `sim/speed` label (MM_BOARD_LABELS;
 * a positive number, default 1), so a test can make one board slower than another.
 */
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { simulatedMetrics, simulatedSpeed } from './simulated-metrics.ts';
import { fileFrameSource, renderTestPatternMp4, textFrameSource } from './test-pattern-video.ts';

const Parameters = z.object({
  duration_s: z.number().min(0).max(86_400).default(1),
  exit_code: z.number().int().min(0).max(255).default(0),
  output_video: z.boolean().default(true),
  spawn_children: z.number().int().min(0).max(16).default(0),
  ignore_sigterm: z.boolean().default(false),
  metrics_json: z.string().max(16 * 1024 * 1024).optional(),
});
type Parameters = z.infer<typeof Parameters>;

const say = (line: string) => process.stdout.write(`${line}\n`);
const complain = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readParameters(file: string | undefined): Promise<Parameters> {
  const defaults = Parameters.parse({});
  if (!file) return defaults;
  const stat = await fsp.stat(file);
  if (stat.size > 1024 * 1024) {
    say(`parameter file ${path.basename(file)} is not a small JSON file: using defaults`);
    return defaults;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await fsp.readFile(file, 'utf8'));
  } catch {
    say(`parameter file ${path.basename(file)} is not JSON: using defaults`);
    return defaults;
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    say('parameter file is JSON but not an object: using defaults');
    return defaults;
  }
  const parsed = Parameters.safeParse(raw);
  if (!parsed.success) {
    complain(`parameter file: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    process.exit(2);
  }
  return parsed.data;
}

async function writeMetrics(outputDir: string, params: Parameters): Promise<void> {
  const text = params.metrics_json ?? JSON.stringify(simulatedMetrics(simulatedSpeed(process.env.MM_BOARD_LABELS)));
  await fsp.writeFile(path.join(outputDir, 'metrics.json'), text);
  say(params.metrics_json !== undefined ? `wrote the given metrics.json (${Buffer.byteLength(text)} bytes)` : `wrote metrics.json ${text}`);
}

async function main(): Promise<void> {
  const env = process.env;
  const outputDir = env.MM_OUTPUT_DIR;
  if (!outputDir) {
    complain('MM_OUTPUT_DIR is not set');
    process.exit(2);
  }
  say(`simulated runner: invocation ${env.MM_INVOCATION_ID} ${JSON.stringify(env.MM_INVOCATION_NAME ?? '')}, pid ${process.pid}`);
  for (const name of ['MM_PARAMETER', 'MM_BITSTREAM', 'MM_WEIGHTS', 'MM_INPUT_VIDEO']) {
    const file = env[name];
    if (!file) {
      say(`${name}: (none)`);
      continue;
    }
    const stat = await fsp.stat(file);
    say(`${name}: ${path.basename(file)} (${stat.size} bytes)`);
  }
  const params = await readParameters(env.MM_PARAMETER);
  if (params.ignore_sigterm) {
    process.on('SIGTERM', () => say('SIGTERM received and ignored'));
  }
  for (let i = 0; i < params.spawn_children; i++) {
    // A helper that outlives nothing on purpose: only the group kill ends it.
    const child = spawn(process.execPath, ['-e', 'process.on("SIGTERM",()=>{});setInterval(()=>{},1000)'], { stdio: 'ignore' });
    say(`helper process pid ${child.pid}`);
  }

  const durationMs = params.duration_s * 1000;
  const tickMs = Math.min(1000, Math.max(100, durationMs / 10));
  const started = Date.now();
  for (;;) {
    const elapsed = Date.now() - started;
    if (elapsed >= durationMs) break;
    say(`progress ${Math.floor((elapsed / Math.max(1, durationMs)) * 100)}% (${(elapsed / 1000).toFixed(1)} of ${params.duration_s} s)`);
    await sleep(Math.min(tickMs, durationMs - elapsed));
  }
  say('progress 100%');

  if (params.exit_code !== 0) {
    complain(`simulated failure: exiting with status ${params.exit_code}`);
    process.exit(params.exit_code);
  }
  await writeMetrics(outputDir, params);
  if (!params.output_video) {
    say('output_video is false: no video made');
    process.exit(0);
  }
  const input = env.MM_INPUT_VIDEO;
  const source = input ? await fileFrameSource(input, 45) : textFrameSource(`${env.MM_INVOCATION_ID}:${env.MM_INVOCATION_NAME}`);
  say(input ? 'rendering output.mp4 from the input video' : 'rendering output.mp4 (no input video)');
  const mp4 = await renderTestPatternMp4(source);
  const target = path.join(outputDir, 'output.mp4');
  // Written under another name first: a half-written file must never look like the output.
  await fsp.writeFile(`${target}.part`, mp4);
  await fsp.rename(`${target}.part`, target);
  say(`wrote output.mp4 (${mp4.byteLength} bytes)`);
  process.exit(0);
}

main().catch((err: unknown) => {
  complain(`simulated runner failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
