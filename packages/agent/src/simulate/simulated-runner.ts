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
 *   until_file      after duration_s, wait until this path exists before ending (a test decides
 *                   the moment the run ends, whatever the machine's speed)
 *   hang            the board hangs (docs/power.md): `board` after `hang_after_s` (default 0)
 *                   the whole board freezes (the agent process is stopped: its link goes
 *                   silent while it lives) and the run never ends; `cancel` the run ignores
 *                   cancel and the board freezes when asked to stop it. Only a power cut
 *                   (the agent's processes killed) ends it.
 *
 * On success it leaves MM_OUTPUT_DIR/metrics.json with `fps` = 30 × speed and
 * `latency_ms` = 1000 / fps, where speed is the board's `sim/speed` label (MM_BOARD_LABELS;
 * a positive number, default 1), so a test can make one board slower than another. The
 * `sim/noise` label (`0.02` or `2%`) adds relative noise to fps: each run's fps is
 * 30 × speed × (1 + noise × Z), Z standard normal (docs/results.md), for A/A comparisons.
 *
 * A parameter file of mm-runner's (`"schema": "mm-runner/1"`) is run by the real mm-runner
 * instead, with only the DPU simulated: the `xir`/`vart` stand-ins of mm-runner/sim go on
 * PYTHONPATH (docs/runner.md, "On the simulated board").
 */
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { runnerLauncher, simulatedDpuPath } from '@mm/runner/home';
import { isRunnerParameterFile } from '../runner/accelerator-swap.ts';
import { simulatedMetrics, simulatedNoise, simulatedSpeed } from './simulated-metrics.ts';
import { fileFrameSource, renderTestPatternMp4, textFrameSource } from './test-pattern-video.ts';

const Parameters = z.object({
  duration_s: z.number().min(0).max(86_400).default(1),
  exit_code: z.number().int().min(0).max(255).default(0),
  output_video: z.boolean().default(true),
  spawn_children: z.number().int().min(0).max(16).default(0),
  ignore_sigterm: z.boolean().default(false),
  metrics_json: z.string().max(16 * 1024 * 1024).optional(),
  until_file: z.string().min(1).max(4096).optional(),
  hang: z.enum(['board', 'cancel']).optional(),
  hang_after_s: z.number().min(0).max(86_400).default(0),
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
  const text = params.metrics_json ?? JSON.stringify(simulatedMetrics(simulatedSpeed(process.env.MM_BOARD_LABELS), simulatedNoise(process.env.MM_BOARD_LABELS)));
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
  if (await isRunnerParameterFile(env.MM_PARAMETER)) return runMmRunner();
  const params = await readParameters(env.MM_PARAMETER);
  if (params.hang) return hang(params);
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
  if (params.until_file) {
    say(`waiting for ${params.until_file}`);
    while (!(await fsp.stat(params.until_file).then(() => true, () => false))) await sleep(100);
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

/**
 * A hung board: the agent process (MM_SIM_AGENT_PID, set by the simulated board) is stopped
 * with SIGSTOP, so its link goes silent while every process lives, as when a bad bitstream
 * or a stuck DPU wedges the board. Nothing ends it but a power cut.
 */
async function hang(params: Parameters): Promise<void> {
  const agentPid = Number(process.env.MM_SIM_AGENT_PID);
  const freeze = () => {
    say('the simulated board hangs now (its agent is stopped)');
    if (Number.isInteger(agentPid) && agentPid > 1) process.kill(agentPid, 'SIGSTOP');
  };
  if (params.hang === 'cancel') {
    say('this run ignores cancel: asking it to stop hangs the board');
    process.on('SIGTERM', freeze);
  } else {
    await sleep(params.hang_after_s * 1000);
    freeze();
  }
  setInterval(() => {}, 60_000);
}

/** mm-runner with the simulated DPU: its exit status is this runner's. */
function runMmRunner(): void {
  say(`a parameter file of mm-runner: running mm-runner with the simulated DPU (${process.env.MM_PYTHON ?? 'python3'})`);
  const pythonPath = [simulatedDpuPath(), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
  const child = spawn(runnerLauncher(), [], { stdio: 'inherit', env: { ...process.env, PYTHONPATH: pythonPath } });
  // The agent stops the whole process group; a SIGTERM to this process alone goes on to mm-runner.
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('error', (err) => {
    complain(`could not start mm-runner: ${err.message}`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15)));
}

main().catch((err: unknown) => {
  complain(`simulated runner failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
