/**
 * Benchmark (run by hand): mm-runner's pipeline overhead beyond the DPU, and its energy
 * window (docs/runner.md, "The pipeline" and "Figures").
 *
 *   npx tsx bench/runner-overhead.ts [--frames 300] [--dpu-ms 20] [--trials 3] [--threads 1,2,3]
 *
 * A 640×360 video of coloured rectangles goes through the real runner (decode, letterbox to
 * 416×416, int8 quantization, YOLOv3 decode and NMS, drawing, H.264 encode) with the
 * simulated DPU at a fixed time per frame on one core: the DPU alone could do 1000/dpu-ms
 * frames a second, so
 *
 *   overhead = (frames × dpu-ms) ⁻¹ × (e2e time) − 1 = DPU-bound fps ÷ e2e_fps − 1
 *
 * is what the rest of the pipeline costs beyond the DPU's own time (0 %: the DPU never waits).
 *
 * The energy check runs against the simulated INA260 (6.4 W idle, +4.8 W while the simulated
 * DPU is busy) with every power sample logged (MM_RUNNER_POWER_LOG): it recomputes
 * energy_mj_per_frame from the samples inside the run's window, shows the idle samples all
 * fall before it, and compares with the device's truth (4.8 W × the DPU's busy time per
 * frame).
 *
 * Needs /usr/bin/python3 with numpy and OpenCV (MM_TEST_PYTHON names another) and ffmpeg.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runnerLauncher, simulatedDpuPath } from '../packages/runner/src/runner-home.ts';
import { pythonRuntime } from '../packages/runner/test/support/python-runtime.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const FRAMES = Number(arg('frames', '300'));
const DPU_MS = Number(arg('dpu-ms', '20'));
const TRIALS = Number(arg('trials', '3'));
const THREADS = arg('threads', '1,2,3').split(',').map(Number);
const COLOURS = ['black', 'white', 'red', 'green', 'blue', 'yellow', 'cyan', 'magenta'];

const runtime = pythonRuntime();
if (!runtime.ok) {
  console.error(runtime.reason);
  process.exit(1);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: status ${r.status}\n${r.stderr}`);
  return r;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-runner-bench-'));
try {
  const model = path.join(dir, 'yolo.xmodel');
  run(runtime.python, ['-m', 'mm_dpu_sim.build', 'yolov3', model, '--input', '416x416', '--dpu-ms', String(DPU_MS)], { PYTHONPATH: simulatedDpuPath() });
  const video = path.join(dir, 'rects.mp4');
  const seconds = FRAMES / 30 + 1;
  run('ffmpeg', [
    '-v', 'error', '-y', '-f', 'lavfi', '-i',
    `color=c=black:s=640x360:d=${seconds}:r=30,drawbox=x='40+t*60':y=40:w=160:h=100:color=red:t=fill,drawbox=x=400:y='200-t*20':w=100:h=120:color=blue:t=fill`,
    '-pix_fmt', 'yuv420p', video,
  ]);
  const hwmon = path.join(dir, 'hwmon');
  const writeHwmon = async () => {
    for (const [rel, text] of Object.entries({ 'mm-simulated': '', 'hwmon0/name': 'ina260\n', 'hwmon0/power1_input': '6400000\n', 'hwmon1/name': 'ams\n', 'hwmon1/temp1_input': '47000\n' })) {
      await fs.mkdir(path.dirname(path.join(hwmon, rel)), { recursive: true });
      await fs.writeFile(path.join(hwmon, rel), text);
    }
  };
  const params = (threads: number) =>
    JSON.stringify({
      schema: 'mm-runner/1',
      task: 'detection',
      preprocess: { resize: 'letterbox', channels: 'rgb', scale: [1 / 255, 1 / 255, 1 / 255] },
      detection: { family: 'yolov3', classes: COLOURS },
      run: { threads, frames: FRAMES, warmup: 5 },
    });

  async function once(threads: number, powerLog?: string): Promise<Record<string, number>> {
    const out = await fs.mkdtemp(path.join(dir, 'out-'));
    const paramFile = path.join(out, '..', `params-${threads}.json`);
    await fs.writeFile(paramFile, params(threads));
    await writeHwmon();
    run(runnerLauncher(), [], {
      MM_PYTHON: runtime.python,
      PYTHONPATH: simulatedDpuPath(),
      MM_OUTPUT_DIR: out,
      MM_PARAMETER: paramFile,
      MM_WEIGHTS: model,
      MM_INPUT_VIDEO: video,
      MM_HWMON_ROOT: hwmon,
      MM_RUNNER_IDLE_S: '1',
      ...(powerLog ? { MM_RUNNER_POWER_LOG: powerLog } : {}),
    });
    const metrics = JSON.parse(await fs.readFile(path.join(out, 'metrics.json'), 'utf8')) as Record<string, number>;
    await fs.rm(out, { recursive: true, force: true });
    return metrics;
  }

  const bound = 1000 / DPU_MS;
  console.log(`mm-runner pipeline overhead: ${FRAMES} frames of 640×360 H.264, YOLOv3 416×416 letterbox, simulated DPU ${DPU_MS} ms/frame on 1 core (DPU-bound ${bound.toFixed(1)} fps)`);
  console.log(`machine: ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${TRIALS} trials each, median shown`);
  console.log('threads   e2e_fps   dpu_fps   overhead vs DPU-bound   overhead vs DPU busy   latency p50/p99 ms');
  for (const threads of THREADS) {
    const trials: Record<string, number>[] = [];
    for (let i = 0; i < TRIALS; i++) trials.push(await once(threads));
    const e2e = median(trials.map((m) => m.e2e_fps!));
    const dpu = median(trials.map((m) => m.dpu_fps!));
    const overBound = (bound / e2e - 1) * 100;
    const overBusy = (dpu / e2e - 1) * 100;
    const p50 = median(trials.map((m) => m.latency_ms_p50!));
    const p99 = median(trials.map((m) => m.latency_ms_p99!));
    console.log(
      `${String(threads).padStart(7)}   ${e2e.toFixed(1).padStart(7)}   ${dpu.toFixed(1).padStart(7)}   ${`${overBound.toFixed(1)} %`.padStart(21)}   ${`${overBusy.toFixed(1)} %`.padStart(20)}   ${p50.toFixed(0)}/${p99.toFixed(0)}`,
    );
  }

  // The energy window.
  const log = path.join(dir, 'power.json');
  const m = await once(2, log);
  const p = JSON.parse(await fs.readFile(log, 'utf8')) as { window_s: [number, number]; idle_power_w: number; samples: [number, number][] };
  const [start, end] = p.window_s;
  const inside = p.samples.filter(([t]) => t >= start && t <= end);
  const before = p.samples.filter(([t]) => t < start);
  const after = p.samples.filter(([t]) => t > end);
  const mean = inside.reduce((s, [, w]) => s + w, 0) / inside.length;
  const recomputed = ((mean - p.idle_power_w) * (end - start) * 1000) / m.frames!;
  const truth = (4.8 * 1000) / m.dpu_fps!;
  const total = (mean * (end - start) * 1000) / m.frames!;
  console.log('');
  console.log(`energy window: ${m.frames} frames in ${(end - start).toFixed(3)} s; ${p.samples.length} samples: ${before.length} before the window (idle ${p.idle_power_w.toFixed(3)} W), ${inside.length} inside, ${after.length} after`);
  console.log(`  metrics:     mean_power_w ${m.mean_power_w}  idle_power_w ${m.idle_power_w}  energy_mj_per_frame ${m.energy_mj_per_frame}  power_samples ${m.power_samples}`);
  console.log(`  recomputed from the samples inside the window: mean ${mean.toFixed(3)} W, ${recomputed.toFixed(2)} mJ/frame (${inside.length === m.power_samples ? 'same sample count' : 'SAMPLE COUNT DIFFERS'})`);
  console.log(`  the simulated device's truth, 4.8 W × DPU busy per frame (1/dpu_fps = ${(1000 / m.dpu_fps!).toFixed(2)} ms): ${truth.toFixed(2)} mJ/frame (${(((m.energy_mj_per_frame! - truth) / truth) * 100).toFixed(1)} %)`);
  console.log(`  (the whole board's energy per frame, idle included, would be ${total.toFixed(2)} mJ)`);
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
