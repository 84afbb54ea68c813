import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runnerHome, simulatedDpuPath } from '../src/runner-home.ts';
import { announceSkip, pythonRuntime } from './support/python-runtime.ts';

/**
 * mm-runner's own tests, in Python (test/python/test_*.py, unittest): the parameter file
 * against the same cases as the server's schema, the xmodel reader and the xir/vart
 * stand-ins, pre/post-processing (YOLO decode and NMS against the stand-in's encoding),
 * and the runner as a process on synthetic videos made with ffmpeg.
 */
const runtime = pythonRuntime();
announceSkip(runtime);
const testDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python');

describe.skipIf(!runtime.ok)('mm-runner (Python)', () => {
  it.each(['test_params', 'test_xmodel', 'test_tasks', 'test_runner_process'])('%s', (module) => {
    const r = spawnSync(runtime.python, ['-m', 'unittest', '-v', module], {
      cwd: testDir,
      env: { ...process.env, PYTHONPATH: [runnerHome(), simulatedDpuPath(), testDir].join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
      timeout: 240_000,
    });
    if (r.status !== 0) throw new Error(`${module} failed (status ${r.status}):\n${r.stderr}\n${r.stdout}`);
    expect(r.stderr).toMatch(/\nOK/);
  }, 300_000);
});
