import { spawnSync } from 'node:child_process';

/**
 * Whether this machine can run mm-runner: a Python 3 with numpy and OpenCV (Debian's
 * `/usr/bin/python3` with python3-numpy and python3-opencv; MM_TEST_PYTHON names another)
 * and ffmpeg/ffprobe on PATH. Tests that need them skip with the one line `reason` on a
 * machine with only Node and npm.
 */
export type PythonRuntime = { ok: true; python: string } | { ok: false; python: string; reason: string };

let cached: PythonRuntime | undefined;

export function pythonRuntime(): PythonRuntime {
  if (cached) return cached;
  const python = process.env.MM_TEST_PYTHON || '/usr/bin/python3';
  const missing: string[] = [];
  const py = spawnSync(python, ['-c', 'import numpy, cv2'], { encoding: 'utf8' });
  if (py.error) missing.push(`${python} (${py.error.message})`);
  else if (py.status !== 0) missing.push(`numpy/cv2 in ${python} (apt install python3-numpy python3-opencv)`);
  for (const tool of ['ffmpeg', 'ffprobe']) {
    const r = spawnSync(tool, ['-version'], { encoding: 'utf8' });
    if (r.error || r.status !== 0) missing.push(`${tool} (apt install ffmpeg)`);
  }
  cached = missing.length === 0 ? { ok: true, python } : { ok: false, python, reason: `mm-runner tests skipped: this machine lacks ${missing.join(', ')}` };
  return cached;
}

/** Prints the skip line once per test file (vitest shows it with the file's output). */
export function announceSkip(runtime: PythonRuntime): void {
  if (!runtime.ok) console.warn(runtime.reason);
}
