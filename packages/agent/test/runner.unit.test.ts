import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveUser } from '../src/config.ts';
import { runInvocation, runnerSpawn, type RunRequest } from '../src/runner/run-invocation.ts';
import { removeTempDirs, tempDir, waitUntil } from './support/agent-fixture.ts';
import { isProcessAlive } from './support/processes.ts';

afterAll(removeTempDirs);

let dir: string;
let workRoot: string;

beforeEach(async () => {
  dir = await tempDir('mm-runner-');
  workRoot = path.join(dir, 'work');
});

/** Runs `script` with /bin/sh as the runner; collects the log per stream. */
async function run(script: string, extra: Partial<RunRequest<string>> = {}) {
  const logs = { stdout: '', stderr: '' };
  const result = await runInvocation<string>({
    argv: ['/bin/sh', '-c', script],
    workRoot,
    opId: 42,
    invocation: { id: 7, name: 'yolo test' },
    inputs: new Map(),
    timeoutMs: 30_000,
    graceMs: 1000,
    onLog: (stream, text) => (logs[stream] += text),
    collectOutput: async (file) => {
      const kept = path.join(dir, `kept-${path.basename(file)}`);
      await fsp.copyFile(file, kept);
      return kept;
    },
    ...extra,
  });
  return { result, logs };
}

describe('runInvocation', () => {
  it('gives the runner the contract variables, a fresh work folder, and nothing of the agent secret', async () => {
    const param = path.join(dir, 'params.json');
    const video = path.join(dir, 'in.mp4');
    await fsp.writeFile(param, '{}');
    await fsp.writeFile(video, 'v');
    const script = [
      'echo "ID=$MM_INVOCATION_ID"',
      'echo "NAME=$MM_INVOCATION_NAME"',
      'echo "PARAM=${MM_PARAMETER-unset}"',
      'echo "BIT=${MM_BITSTREAM-unset}"',
      'echo "WEIGHTS=${MM_WEIGHTS-unset}"',
      'echo "VIDEO=${MM_INPUT_VIDEO-unset}"',
      'echo "OUT=$MM_OUTPUT_DIR"',
      'echo "CWD=$(pwd)"',
      'echo "TOKEN=${MM_BOARD_TOKEN-unset}"',
      'echo "KEPT=$SOMETHING_ELSE"',
      'echo "$MM_OUTPUT_DIR" > "$RESULT_DIR/outdir"',
      'echo data > "$MM_OUTPUT_DIR/result.mp4"',
    ].join('\n');
    const { result, logs } = await run(script, {
      inputs: new Map([
        ['parameter', param],
        ['input_video', video],
      ]),
      baseEnv: { PATH: process.env.PATH, MM_BOARD_TOKEN: 'secret', MM_WEIGHTS: '/stale/path', SOMETHING_ELSE: 'kept', RESULT_DIR: dir },
    });
    expect(result.status).toBe('succeeded');
    const lines = Object.fromEntries(logs.stdout.trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(lines.ID).toBe('7');
    expect(lines.NAME).toBe('yolo test');
    expect(lines.PARAM).toBe(param);
    expect(lines.BIT).toBe('unset');
    expect(lines.WEIGHTS).toBe('unset');
    expect(lines.VIDEO).toBe(video);
    expect(lines.TOKEN).toBe('unset');
    expect(lines.KEPT).toBe('kept');
    expect(path.isAbsolute(lines.OUT!)).toBe(true);
    expect(path.dirname(lines.OUT!)).toBe(lines.CWD);
    expect(path.dirname(lines.CWD!)).toBe(workRoot);
    // The output was taken before the work folder went.
    if (result.status === 'succeeded') {
      expect(result.outputFilename).toBe('result.mp4');
      expect(await fsp.readFile(result.output, 'utf8')).toBe('data\n');
    }
    expect(await fsp.readdir(workRoot)).toEqual([]);
  });

  it('streams stdout and stderr separately, keeping multi-byte characters whole across writes', async () => {
    const { logs } = await run(`printf 'caf\\303'; sleep 0.3; printf '\\251 ok\\n'; echo oops >&2; echo x > "$MM_OUTPUT_DIR/o.mp4"`);
    expect(logs.stdout).toBe('café ok\n');
    expect(logs.stderr).toBe('oops\n');
  });

  it('delivers the log live, before the runner ends', async () => {
    const marker = path.join(dir, 'may-exit');
    let sawEarly = false;
    const running = run(`echo started; while [ ! -f "${marker}" ]; do sleep 0.05; done; echo x > "$MM_OUTPUT_DIR/o.mp4"`, {
      onLog: (_s, text) => {
        if (text.includes('started')) sawEarly = true;
      },
    });
    await waitUntil(() => sawEarly, 'the first log line while the runner still runs');
    await fsp.writeFile(marker, '');
    expect((await running).result.status).toBe('succeeded');
  });

  it('takes the newest .mp4/.avi of MM_OUTPUT_DIR', async () => {
    const { result } = await run(
      `cd "$MM_OUTPUT_DIR"; echo a > a.mp4; echo b > b.AVI; echo c > c.txt; echo n > newest.mp4; touch -d '2020-01-01' a.mp4; touch -d '2021-01-01' b.AVI`,
    );
    expect(result.status === 'succeeded' && result.outputFilename).toBe('newest.mp4');
  });

  it('a symbolic link left as the output video is not taken (nor is what it points at touched)', async () => {
    const secret = path.join(dir, 'agent-only.txt');
    await fsp.writeFile(secret, 'secret', { mode: 0o600 });
    const { result } = await run(`ln -s "${secret}" "$MM_OUTPUT_DIR/out.mp4"`);
    expect(result.status).toBe('failed');
    if (result.status === 'failed') expect(result.error.code).toBe('no_output_video');
    expect((await fsp.stat(secret)).mode & 0o777).toBe(0o600);
    expect(await fsp.readFile(secret, 'utf8')).toBe('secret');
  });

  it('a non-zero exit is runner_failed with the status', async () => {
    const { result } = await run('echo bad >&2; exit 3');
    expect(result.status).toBe('failed');
    expect(result.status !== 'succeeded' && result.error.code).toBe('runner_failed');
    expect(result.status !== 'succeeded' && result.error.message).toContain('3');
    expect(result.exitCode).toBe(3);
  });

  it('exit 0 without a video is no_output_video', async () => {
    const { result } = await run('echo done');
    expect(result.status !== 'succeeded' && result.error.code).toBe('no_output_video');
    expect(result.exitCode).toBe(0);
  });

  it('a runner that cannot start is runner_failed', async () => {
    const { result } = await run('', { argv: [path.join(dir, 'no-such-runner')] });
    expect(result.status !== 'succeeded' && result.error.code).toBe('runner_failed');
    expect(result.status !== 'succeeded' && result.error.message).toContain('could not start');
  });

  it('stops a runner that outlives its timeout', async () => {
    const pidFile = path.join(dir, 'pid');
    const { result } = await run(`echo $$ > "${pidFile}"; sleep 60`, { timeoutMs: 500 });
    expect(result.status).toBe('failed');
    expect(result.status !== 'succeeded' && result.error.code).toBe('timeout');
    expect(isProcessAlive(Number(await fsp.readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('cancel ends the whole process group, children included', async () => {
    const pids = path.join(dir, 'pids');
    const cancel = new AbortController();
    const running = run(`sleep 300 & echo $! >> "${pids}"; sh -c 'sleep 300 & echo $! >> "${pids}"; wait' & echo $! >> "${pids}"; echo $$ >> "${pids}"; wait`, {
      signal: cancel.signal,
    });
    const list = await waitUntil(async () => {
      const text = await fsp.readFile(pids, 'utf8').catch(() => '');
      const found = text.trim().split('\n').filter(Boolean).map(Number);
      return found.length >= 4 && found;
    }, 'the runner and its children to start');
    expect(list.every(isProcessAlive)).toBe(true);
    cancel.abort();
    const { result } = await running;
    expect(result.status).toBe('cancelled');
    await waitUntil(() => list.every((pid) => !isProcessAlive(pid)), 'every process of the group to be gone', 10_000);
  });

  it('a runner that ignores SIGTERM is killed after the grace period', async () => {
    const pidFile = path.join(dir, 'pid');
    const cancel = new AbortController();
    const running = run(`trap '' TERM; echo $$ > "${pidFile}"; sleep 300 & echo $! >> "${pidFile}"; wait; wait; wait`, { signal: cancel.signal, graceMs: 300 });
    const list = await waitUntil(async () => {
      const found = (await fsp.readFile(pidFile, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map(Number);
      return found.length >= 2 && found;
    }, 'the runner to start');
    cancel.abort();
    const { result } = await running;
    expect(result.status).toBe('cancelled');
    await waitUntil(() => list.every((pid) => !isProcessAlive(pid)), 'the SIGTERM-proof processes to be gone', 10_000);
  });

  it('processes the runner leaves behind when it exits are ended too', async () => {
    const pidFile = path.join(dir, 'pid');
    const { result } = await run(`sleep 300 > /dev/null 2>&1 & echo $! > "${pidFile}"; echo x > "$MM_OUTPUT_DIR/o.mp4"`);
    expect(result.status).toBe('succeeded');
    const pid = Number(await fsp.readFile(pidFile, 'utf8'));
    await waitUntil(() => !isProcessAlive(pid), 'the leftover process to be gone', 10_000);
  });
});

describe('runInvocation as MM_RUNNER_USER', () => {
  it('builds the sudo command line when the agent is not root', () => {
    const nobody = { name: 'mm-runner', uid: 1001, gid: 1001 };
    expect(runnerSpawn(['/opt/run', 'a b'], nobody, false)).toEqual({ command: 'sudo', args: ['-n', '-u', 'mm-runner', '--', '/opt/run', 'a b'], ids: {} });
    expect(runnerSpawn(['/opt/run'], nobody, true)).toEqual({ command: '/opt/run', args: [], ids: { uid: 1001, gid: 1001 } });
    expect(runnerSpawn(['/opt/run'], undefined, true)).toEqual({ command: '/opt/run', args: [], ids: {} });
  });

  it.runIf(process.getuid?.() === 0)('runs as that user (as root: its uid/gid), which cannot read the agent’s environment', async () => {
    const user = resolveUser('nobody');
    // The test's temporary folder is private to root; a board's MM_AGENT_DIR is traversable by the runner user.
    await fsp.chmod(dir, 0o755);
    const param = path.join(dir, 'params.json');
    await fsp.writeFile(param, '{"p":1}', { mode: 0o444 });
    const script = [
      'echo "UID=$(id -u)"',
      'echo "PARAM=$(cat "$MM_PARAMETER")"',
      'cat /proc/$PPID/environ >/dev/null 2>&1 && echo "ENVIRON=readable" || echo "ENVIRON=denied"',
      'echo video > "$MM_OUTPUT_DIR/out.mp4"',
    ].join('\n');
    const { result, logs } = await run(script, { runAs: user, inputs: new Map([['parameter', param]]) });
    expect(result.status, logs.stderr).toBe('succeeded');
    expect(logs.stdout).toContain(`UID=${user.uid}`);
    expect(logs.stdout).toContain('PARAM={"p":1}');
    expect(logs.stdout).toContain('ENVIRON=denied');
  });
});
