import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInvocation } from '../src/runner/run-invocation.ts';
import { simulatedRunnerCommand } from '../src/simulate/simulated-programs.ts';
import { removeTempDirs, sha256, tempDir } from './support/agent-fixture.ts';
import { findBox, movieDurationSeconds, parseBoxes } from './support/mp4-boxes.ts';

afterAll(removeTempDirs);

let dir: string;
beforeAll(async () => {
  dir = await tempDir('mm-simrun-');
});

/** Runs the simulated runner through the normal runner path (a real child process). */
async function runSimulated(inputs: Record<string, string>, name = 'sim') {
  let log = '';
  const keptDir = await fsp.mkdtemp(path.join(dir, 'kept-'));
  const result = await runInvocation<string>({
    argv: simulatedRunnerCommand(),
    workRoot: path.join(dir, 'work'),
    opId: 1,
    invocation: { id: 3, name },
    inputs: new Map(Object.entries(inputs)),
    timeoutMs: 60_000,
    onLog: (_s, text) => (log += text),
    collectOutput: async (file) => {
      const kept = path.join(keptDir, path.basename(file));
      await fsp.copyFile(file, kept);
      return kept;
    },
  });
  return { result, log };
}

function checkPlayableMp4(mp4: Buffer) {
  const boxes = parseBoxes(mp4);
  const top = boxes.map((b) => b.type);
  expect(top[0]).toBe('ftyp');
  expect(top).toContain('moov');
  expect(top).toContain('mdat');
  expect(findBox(boxes, ['mdat'])!.size).toBeGreaterThan(1000);
  const sampleEntry = findBox(boxes, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd']);
  expect(sampleEntry?.children.map((c) => c.type)).toContain('avc1');
  expect(movieDurationSeconds(mp4, boxes)).toBeGreaterThan(1);
}

describe('the simulated runner', () => {
  it('runs from the workspace as a bundle with plain node (no tsx at each run), kept for its sources', () => {
    const argv = simulatedRunnerCommand();
    expect(argv).toHaveLength(2);
    expect(argv[0]).toBe(process.execPath);
    expect(argv[1]).toMatch(/node_modules\/\.cache\/mm-simulated-runner\/[0-9a-f]{16}\/simulated-runner\.mjs$/);
    // mm-runner, which it starts for mm-runner parameter files, is beside it.
    expect(existsSync(path.join(path.dirname(argv[1]!), 'mm-runner'))).toBe(true);
  });

  it('makes a valid H.264 MP4 from the input video, whose pictures depend on its bytes', async () => {
    const inputA = path.join(dir, 'a.avi');
    const inputB = path.join(dir, 'b.avi');
    await fsp.writeFile(inputA, randomBytes(200_000));
    await fsp.writeFile(inputB, randomBytes(200_000));
    const params = path.join(dir, 'params.json');
    await fsp.writeFile(params, JSON.stringify({ duration_s: 0.3 }));
    const a = await runSimulated({ parameter: params, input_video: inputA });
    expect(a.result.status).toBe('succeeded');
    expect(a.log).toContain('progress 100%');
    expect(a.log).toContain('MM_INPUT_VIDEO: a.avi');
    const mp4A = await fsp.readFile(a.result.status === 'succeeded' ? a.result.output : '');
    checkPlayableMp4(mp4A);

    const b = await runSimulated({ parameter: params, input_video: inputB });
    const mp4B = await fsp.readFile(b.result.status === 'succeeded' ? b.result.output : '');
    checkPlayableMp4(mp4B);
    expect(sha256(mp4B)).not.toBe(sha256(mp4A));
  });

  it('makes a video from nothing when there is no input video', async () => {
    const { result, log } = await runSimulated({});
    expect(result.status).toBe('succeeded');
    expect(log).toContain('MM_INPUT_VIDEO: (none)');
    checkPlayableMp4(await fsp.readFile(result.status === 'succeeded' ? result.output : ''));
  });

  it('honours exit_code and duration_s from a JSON parameter file', async () => {
    const params = path.join(dir, 'fail.json');
    await fsp.writeFile(params, JSON.stringify({ duration_s: 1.2, exit_code: 7 }));
    const { result, log } = await runSimulated({ parameter: params });
    expect(result.status).toBe('failed');
    expect(result.exitCode).toBe(7);
    expect(result.status !== 'succeeded' && result.error.code).toBe('runner_failed');
    // Several progress lines over the run's duration, then the failure on stderr.
    expect(log.match(/^progress /gm)?.length).toBeGreaterThanOrEqual(3);
    expect(log).toContain('exiting with status 7');
    expect(result.durationMs).toBeGreaterThanOrEqual(1200);
  });

  it('output_video false ends without a video (no_output_video)', async () => {
    const params = path.join(dir, 'novideo.json');
    await fsp.writeFile(params, JSON.stringify({ duration_s: 0, output_video: false }));
    const { result } = await runSimulated({ parameter: params });
    expect(result.status !== 'succeeded' && result.error.code).toBe('no_output_video');
  });

  it('a parameter file that is not JSON is ignored', async () => {
    const params = path.join(dir, 'params.bin');
    await fsp.writeFile(params, randomBytes(100));
    const { result, log } = await runSimulated({ parameter: params });
    expect(result.status).toBe('succeeded');
    expect(log).toContain('not JSON');
  });
});
