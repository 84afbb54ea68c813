/**
 * End to end: mm-runner through the real control plane and a real `mm-agent --simulate`, on
 * which only the DPU is simulated (docs/runner.md). Synthetic videos of known colours and
 * rectangles go in; the output video comes back and is decoded and looked at, beside
 * results.jsonl and the run's figures. Also: bad parameter files refused at upload (every
 * way in), a bitstream loaded and the FPGA put back after a cancelled run, a corrupt video.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedDpuPath } from '../../packages/runner/src/runner-home.ts';
import { announceSkip, pythonRuntime } from '../../packages/runner/test/support/python-runtime.ts';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';

const runtime = pythonRuntime();
announceSkip(runtime);

const COLOURS = ['black', 'white', 'red', 'green', 'blue', 'yellow', 'cyan', 'magenta'];
const RGB01 = { channels: 'rgb', scale: [1 / 255, 1 / 255, 1 / 255] };
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const tusMeta = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

function run(command: string, args: string[], env?: NodeJS.ProcessEnv): Buffer {
  const r = spawnSync(command, args, { env: { ...process.env, ...env }, maxBuffer: 512 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr?.toString()}`);
  return r.stdout;
}

/** Decoded BGR frames of a video. */
function decodeFrames(file: string, width: number, height: number): Buffer[] {
  const raw = run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'bgr24', '-']);
  const size = width * height * 3;
  return Array.from({ length: raw.length / size }, (_, i) => raw.subarray(i * size, (i + 1) * size));
}

const pixel = (frame: Buffer, width: number, x: number, y: number) => {
  const at = (Math.round(y) * width + Math.round(x)) * 3;
  return [frame[at]!, frame[at + 1]!, frame[at + 2]!];
};
const near = (got: number[], want: number[], tolerance: number) => got.every((v, i) => Math.abs(v - want[i]!) <= tolerance);

// One database kind is enough: the runner does not touch the store beyond what other tests cover.
const kind = dbKinds[dbKinds.length - 1]!;

describe.skipIf(!runtime.ok)(`mm-runner on the simulated board, end to end (${kind} database)`, () => {
  let cluster: ServerCluster;
  let agent: AgentProcess;
  let scratch: string;
  let board: { id: string; token: string };
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);
  const file = (name: string) => path.join(scratch, name);

  async function invocation(name: string, files: Record<string, { name: string; data: Buffer | string }>): Promise<number> {
    const created = await api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, description: 'mm-runner e2e' }) });
    expect(created.status).toBe(201);
    const id = (await json(created)).id as number;
    for (const [kind, f] of Object.entries(files)) {
      const res = await upload(id, kind, f.name, f.data);
      expect(res.status, await res.clone().text()).toBe(201);
    }
    return id;
  }

  function upload(id: number, kind: string, name: string, data: Buffer | string): Promise<Response> {
    const form = new FormData();
    form.set('file_type', kind);
    form.set('file', new Blob([typeof data === 'string' ? data : new Uint8Array(data)]), name);
    return api(`/api/invocations/${id}/upload/`, { method: 'POST', body: form });
  }

  async function execute(id: number): Promise<any> {
    const res = await api(`/api/invocations/${id}/execute/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ board_id: board.id }) });
    return json(res);
  }

  async function log(opId: number): Promise<string> {
    return (await api(`/api/operations/${opId}/log/`)).text();
  }

  async function results(id: number, opId?: number): Promise<any[]> {
    const res = await api(`/api/invocations/${id}/results/${opId ? `?operation_id=${opId}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    return (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  }

  async function outputFrames(id: number, width: number, height: number): Promise<Buffer[]> {
    const res = await api(`/api/invocations/${id}/video/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const target = file(`out-${id}.mp4`);
    await fs.writeFile(target, Buffer.from(await res.arrayBuffer()));
    const codec = run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,pix_fmt', '-of', 'csv=p=0', target]).toString().trim();
    expect(codec).toBe('h264,yuv420p');
    return decodeFrames(target, width, height);
  }

  const xmodel = (kind: string, args: string[]) => {
    const out = file(`${kind}-${args.join('-').replace(/\W+/g, '_')}.xmodel`);
    run(runtime.python, ['-m', 'mm_dpu_sim.build', kind, out, ...args], { PYTHONPATH: simulatedDpuPath() });
    return fs.readFile(out);
  };
  const video = async (name: string, args: string[]) => {
    run('ffmpeg', ['-v', 'error', '-y', ...args, '-pix_fmt', 'yuv420p', file(name)]);
    return fs.readFile(file(name));
  };
  const activeApp = async () =>
    (JSON.parse(await fs.readFile(path.join(agent.agentDir, 'simulated-board', 'dfx-mgr-sim-state.json'), 'utf8')) as { active: { name: string } | null }).active?.name ?? null;
  const fpgaState = async () => JSON.parse(await fs.readFile(path.join(agent.agentDir, 'simulated-board', 'fpga-sim-state.json'), 'utf8')) as { bitstream: string; overlay: string | null; loads: number };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-runner-'));
    cluster = await serverCluster(kind);
    const { url } = await cluster.start();
    const res = await api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'runner-e2e' }) });
    expect(res.status).toBe(201);
    board = await json(res);
    agent = await startAgent({
      serverUrl: url,
      token: board.token,
      agentDir: path.join(scratch, 'agent'),
      env: { MM_PYTHON: runtime.python, MM_RUNNER_IDLE_S: '0.3', MM_SIM_FPGA_LOAD_MS: '50' },
    });
    await eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000);
  });

  afterAll(async () => {
    await agent?.stop();
    await cluster?.cleanup();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  it('classification: every frame labelled with its colour, in results.jsonl and drawn on the video, with the figures', async () => {
    const id = await invocation('colours', {
      weights: { name: 'classifier.xmodel', data: await xmodel('classifier', ['--input', '224x224', '--dpu-ms', '3']) },
      input_video: {
        name: 'colours.mp4',
        data: await video('colours.mp4', ['-f', 'lavfi', '-i', 'color=c=red:s=320x240:d=1:r=12', '-f', 'lavfi', '-i', 'color=c=0x00FFFF:s=320x240:d=1:r=12', '-filter_complex', '[0][1]concat=n=2:v=1']),
      },
      parameter: { name: 'params.json', data: JSON.stringify({ schema: 'mm-runner/1', task: 'classification', preprocess: RGB01, classification: { labels: COLOURS, top_k: 3 }, run: { threads: 2, warmup: 2 } }) },
    });
    const op = await execute(id);
    expect(op.status, JSON.stringify(op.error) + (await log(op.id))).toBe('succeeded');
    const text = await log(op.id);
    expect(text).toContain('running mm-runner with the simulated DPU');
    expect(text).toContain('power: INA260 ina260 at hwmon0 (U14: the board\'s 12 V input)');

    const lines = await results(id);
    expect(lines.map((l) => l.frame)).toEqual([...Array(24).keys()]);
    expect(lines.slice(0, 12).map((l) => l.classes[0].label)).toEqual(Array(12).fill('red'));
    expect(lines.slice(12).map((l) => l.classes[0].label)).toEqual(Array(12).fill('cyan'));
    expect(lines[0].classes).toHaveLength(3);
    expect(lines[0].classes[0].score).toBeGreaterThan(0.9);
    expect(await results(id, op.id)).toEqual(lines);
    expect(op.result.results).toMatchObject({ filename: 'results.jsonl', url: `/api/invocations/${id}/results/?operation_id=${op.id}` });

    const frames = await outputFrames(id, 320, 240);
    expect(frames).toHaveLength(24);
    // The top label's box (orange, BGR 0,160,255) in the corner; the frame's own colour elsewhere.
    expect(near(pixel(frames[3]!, 320, 10, 8), [0, 160, 255], 45)).toBe(true);
    expect(near(pixel(frames[3]!, 320, 200, 200), [0, 0, 255], 30)).toBe(true);
    expect(near(pixel(frames[20]!, 320, 200, 200), [255, 255, 0], 30)).toBe(true);

    const m = op.result.metrics as Record<string, number>;
    expect(m.frames).toBe(24);
    for (const name of ['e2e_fps', 'dpu_fps', 'latency_ms_p50', 'latency_ms_p95', 'latency_ms_p99', 'dpu_ms', 'dpu_ms_subgraph_body', 'mean_power_w', 'idle_power_w', 'energy_mj_per_frame', 'max_temperature_c', 'run_ms']) {
      expect(m[name], name).toBeGreaterThan(0);
    }
    expect(m.latency_ms_p50).toBeLessThanOrEqual(m.latency_ms_p99!);
    expect(m.idle_power_w).toBeCloseTo(6.4, 1);
    expect(m.mean_power_w).toBeGreaterThan(m.idle_power_w!);
    // The per-run metrics flow into the series the dashboard plots.
    const series = await json(await api(`/api/invocations/${id}/metrics/?name=e2e_fps`));
    expect(series.points).toEqual([expect.objectContaining({ operation_id: op.id, value: m.e2e_fps })]);
  });

  it('detection: YOLO boxes found where the rectangles are, drawn on the video', async () => {
    const rects = { red: [60, 40, 160, 100], blue: [400, 180, 100, 140] } as const;
    const id = await invocation('rectangles', {
      weights: { name: 'yolo.xmodel', data: await xmodel('yolov3', ['--input', '416x416', '--dpu-ms', '3']) },
      input_video: {
        name: 'rects.mp4',
        data: await video('rects.mp4', ['-f', 'lavfi', '-i', 'color=c=black:s=640x360:d=1:r=8,drawbox=x=60:y=40:w=160:h=100:color=red:t=fill,drawbox=x=400:y=180:w=100:h=140:color=blue:t=fill']),
      },
      parameter: {
        name: 'params.json',
        data: JSON.stringify({ schema: 'mm-runner/1', task: 'detection', preprocess: { ...RGB01, resize: 'letterbox' }, detection: { family: 'yolov3', classes: COLOURS, conf: 0.5, nms: 0.45 }, run: { threads: 3 } }),
      },
    });
    const op = await execute(id);
    expect(op.status, JSON.stringify(op.error) + (await log(op.id))).toBe('succeeded');
    const lines = await results(id);
    expect(lines).toHaveLength(8);
    for (const line of lines) {
      const boxes = Object.fromEntries(line.boxes.map((b: any) => [b.label, b]));
      expect(Object.keys(boxes).sort()).toEqual(['blue', 'red']);
      for (const [label, [x, y, w, h]] of Object.entries(rects)) {
        const b = boxes[label];
        expect(b.score).toBeGreaterThan(0.9);
        for (const [got, want, size] of [[b.x, x, w], [b.y, y, h], [b.w, w, w], [b.h, h, h]] as const) expect(Math.abs(got - want)).toBeLessThan(3 + 0.05 * size);
      }
    }
    const frames = await outputFrames(id, 640, 360);
    expect(frames).toHaveLength(8);
    const b = lines[4].boxes.find((x: any) => x.label === 'blue');
    // The outline is drawn on the box's left edge (a bright class colour, not the background's black)…
    expect(Math.max(...pixel(frames[4]!, 640, b.x, b.y + b.h / 2))).toBeGreaterThan(150);
    // …and the label over its top; far from both boxes the frame is black as it came.
    expect(Math.max(...pixel(frames[4]!, 640, b.x + 4, b.y - 10))).toBeGreaterThan(150);
    expect(Math.max(...pixel(frames[4]!, 640, 320, 330))).toBeLessThan(25);
  });

  it('passthrough: the model runs, the frames go out untouched, results.jsonl has timings only', async () => {
    const id = await invocation('timing', {
      weights: { name: 'identity.xmodel', data: await xmodel('identity', ['--input', '224x224', '--dpu-ms', '2']) },
      input_video: { name: 'pattern.mp4', data: await video('pattern.mp4', ['-f', 'lavfi', '-i', 'testsrc=s=160x120:d=1:r=10']) },
      parameter: { name: 'params.json', data: JSON.stringify({ schema: 'mm-runner/1', task: 'passthrough', run: { threads: 1, warmup: 0, repeat: 2 } }) },
    });
    const op = await execute(id);
    expect(op.status, await log(op.id)).toBe('succeeded');
    const lines = await results(id);
    expect(lines).toHaveLength(20);
    expect(Object.keys(lines[0]).sort()).toEqual(['frame', 'latency_ms', 't_ms']);
    expect(op.result.metrics.frames).toBe(20);
    const input = decodeFrames(file('pattern.mp4'), 160, 120);
    const output = await outputFrames(id, 160, 120);
    expect(output).toHaveLength(20);
    // Re-encoded, not drawn on: every pixel close to the input's.
    let worst = 0;
    for (let i = 0; i < input[5]!.length; i++) worst = Math.max(worst, Math.abs(input[5]![i]! - output[5]![i]!));
    expect(worst).toBeLessThan(90);
    expect(near(pixel(output[15]!, 160, 80, 60), pixel(input[5]!, 160, 80, 60), 30)).toBe(true);
  });

  it("command: the user's own program runs as before, with the runner's environment", async () => {
    const script = 'echo "my runner for $MM_INVOCATION_NAME"; cp "$MM_INPUT_VIDEO" "$MM_OUTPUT_DIR/mine.mp4"; echo \'{"fps": 42}\' > "$MM_OUTPUT_DIR/metrics.json"';
    const id = await invocation('own command', {
      input_video: { name: 'pattern.mp4', data: await fs.readFile(file('pattern.mp4')) },
      parameter: { name: 'params.json', data: JSON.stringify({ schema: 'mm-runner/1', task: 'command', command: ['sh', '-c', script] }) },
    });
    const op = await execute(id);
    expect(op.status, await log(op.id)).toBe('succeeded');
    expect(await log(op.id)).toContain('my runner for own command');
    expect(op.result.metrics.fps).toBe(42);
    expect(op.result.output_filename).toBe('mine.mp4');
    expect((await api(`/api/invocations/${id}/results/`)).status).toBe(404);
  });

  it('refuses a bad parameter file at upload with the JSON path of its first problem, storing nothing (multipart, attach by sha256, tus)', async () => {
    const id = await invocation('bad parameters', {});
    const bad = JSON.stringify({ schema: 'mm-runner/1', task: 'detection', detection: { family: 'yolov3', conf: 3 } });
    const res = await upload(id, 'parameter', 'params.json', bad);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = await json(res);
    expect(problem).toMatchObject({ code: 'invalid_parameter_file', path: '$.detection.conf', errors: [{ field: '$.detection.conf', message: 'must be at most 1' }] });
    expect((await json(await api(`/api/invocations/${id}/`))).files.parameter).toBeNull();
    // The content is not kept either: attaching it by its sha256 finds nothing.
    const attach = (sha: string) =>
      api(`/api/invocations/${id}/files/parameter/`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sha256: sha, filename: 'p.json' }) });
    expect((await attach(sha256(Buffer.from(bad)))).status).toBe(404);

    // Content the server holds (here as the weights) attached as the parameter file: checked too.
    const other = JSON.stringify({ schema: 'mm-runner/1', task: 'classification', preprocess: { size: [224] } });
    expect((await upload(id, 'weights', 'w.json', other)).status).toBe(201);
    const attached = await attach(sha256(Buffer.from(other)));
    expect(attached.status).toBe(400);
    expect(await json(attached)).toMatchObject({ code: 'invalid_parameter_file', path: '$.preprocess.size' });

    // tus: the finished upload is refused the same way.
    const body = Buffer.from(JSON.stringify({ schema: 'mm-runner/1', task: 'passthrough', run: { threads: 0 } }));
    const created = await api('/api/uploads/', {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': String(body.length), 'upload-metadata': tusMeta({ invocation_id: String(id), file_type: 'parameter', filename: 'p.json' }) },
    });
    expect(created.status).toBe(201);
    const patched = await api(created.headers.get('location')!, {
      method: 'PATCH',
      headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body,
    });
    expect(patched.status).toBe(400);
    expect(await json(patched)).toMatchObject({ code: 'invalid_parameter_file', path: '$.run.threads' });
    expect((await json(await api(`/api/invocations/${id}/`))).files.parameter).toBeNull();

    // Without `schema` a parameter file keeps its old meaning, unchecked.
    expect((await upload(id, 'parameter', 'p.json', JSON.stringify({ duration_s: 0.2, conf: 3 }))).status).toBe(201);
  });

  it("loads the run's bitstream and puts the FPGA back after a run, and after a cancelled one", async () => {
    // The simulated KV260 boots with dfx-mgrd's default app active, its design in the one FPGA
    // (the raw-bitstream case, fpgautil only, is packages/agent/test/accelerator-swap.test.ts).
    const base = await fpgaState();
    expect(path.basename(base.bitstream)).toBe('kv260-benchmark-b4096.bit.bin');
    expect(path.basename(base.overlay ?? '')).toBe('kv260-benchmark-b4096.dtbo');
    const weights = await xmodel('classifier', ['--input', '224x224', '--dpu-ms', '40']);
    const long = await video('long.mp4', ['-f', 'lavfi', '-i', 'color=c=blue:s=160x120:d=60:r=25']);
    const id = await invocation('with a bitstream', {
      weights: { name: 'classifier.xmodel', data: weights },
      input_video: { name: 'long.mp4', data: long },
      bitstream: { name: 'design.bit.bin', data: Buffer.from('a simulated bitstream') },
      parameter: { name: 'params.json', data: JSON.stringify({ schema: 'mm-runner/1', task: 'classification', preprocess: RGB01, run: { frames: 5, warmup: 0 } }) },
    });
    const done = await execute(id);
    expect(done.status, await log(done.id)).toBe('succeeded');
    expect(done.result).toMatchObject({ bitstream_loaded: true, accelerator_restored: true });
    const text = await log(done.id);
    expect(text).toContain('the accelerator holds the accelerated app kv260-benchmark-b4096');
    expect(text).toContain('unloading kv260-benchmark-b4096');
    expect(text).toContain("loaded the run's bitstream design.bit.bin with fpgautil");
    expect(text).toContain('put back the accelerated app kv260-benchmark-b4096');
    expect(await fpgaState()).toMatchObject({ bitstream: base.bitstream, overlay: base.overlay, loads: base.loads + 2 });
    expect(await activeApp()).toBe('kv260-benchmark-b4096');

    // A long run, cancelled while the run's bitstream is in the FPGA.
    expect((await upload(id, 'parameter', 'params.json', JSON.stringify({ schema: 'mm-runner/1', task: 'classification', preprocess: RGB01 }))).status).toBe(201);
    const started = await api(`/api/invocations/${id}/execute/`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, body: JSON.stringify({ board_id: board.id }) });
    expect(started.status).toBe(202);
    const opId = (await json(started)).id as number;
    await eventually(async () => {
      expect(await log(opId)).toContain('running classification over every frame');
      expect(path.basename((await fpgaState()).bitstream)).toBe('design.bit.bin');
    }, 60_000);
    expect((await api(`/api/operations/${opId}/cancel/`, { method: 'POST' })).status).toBeLessThan(300);
    const cancelled = await eventually(async () => {
      const op = await json(await api(`/api/operations/${opId}/`));
      expect(op.status).toBe('cancelled');
      return op;
    }, 60_000);
    expect(cancelled.error.code).toBe('cancelled');
    expect(await fpgaState()).toMatchObject({ bitstream: base.bitstream, overlay: base.overlay });
    expect(await activeApp()).toBe('kv260-benchmark-b4096');
    expect(await log(opId)).toContain('put back the accelerated app kv260-benchmark-b4096');
  }, 240_000); // two runs and a cancel, each waited for up to a minute

  it('fails a corrupt video with a clear reason', async () => {
    const id = await invocation('corrupt video', {
      weights: { name: 'classifier.xmodel', data: await xmodel('classifier', ['--input', '224x224']) },
      input_video: { name: 'broken.mp4', data: Buffer.concat([Buffer.from('\0\0\0\x18ftypmp42'), createHash('sha512').update('x').digest(), Buffer.alloc(3000, 7)]) },
      parameter: { name: 'params.json', data: JSON.stringify({ schema: 'mm-runner/1', task: 'classification' }) },
    });
    const res = await api(`/api/invocations/${id}/execute/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ board_id: board.id }) });
    const body = await json(res);
    const op = body.operation ?? body;
    expect(op.status).toBe('failed');
    expect(op.error.code).toBe('runner_failed');
    expect(op.error.message).toContain('status 3');
    expect(await log(op.id)).toContain('mm-runner: the input video cannot be read');
  });
});
