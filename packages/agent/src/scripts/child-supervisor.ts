import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { OutputRing } from './output-ring.ts';
import { launchArgv } from './script-launch.ts';
import type { ScriptProcessSpec, ScriptSupervisor, SupervisedState } from './script-supervisor.ts';

export interface ChildSupervisorOptions {
  /** First restart delay, doubled after each crash up to `maxBackoffMs` (default 500 ms). */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Up this long, a crash starts the backoff from the beginning again (default 10 s). */
  stableAfterMs?: number;
  /** Between SIGTERM and SIGKILL on stop (default 3 s). */
  stopGraceMs?: number;
  /** Bytes of output kept per script (default 64 KiB). */
  logBytes?: number;
  /** The backoff, the stable time and the stop grace (default: the system clock). */
  clock?: Clock;
}

interface Supervised {
  spec: ScriptProcessSpec;
  child: ChildProcess | undefined;
  wanted: boolean;
  state: SupervisedState;
  output: OutputRing;
  backoffMs: number;
  startedAt: number;
  timer: TimerHandle | undefined;
  exited: Promise<void>;
}

const now = () => new Date().toISOString();

/**
 * The simulated board's supervisor: each script a child process (its own process group) with
 * PORT set; one that exits while wanted is started again after a backoff that doubles (500 ms,
 * 1 s, 2 s, … up to 30 s) and counted in `restarts`. Output goes to a bounded buffer.
 */
export class ChildSupervisor implements ScriptSupervisor {
  private readonly scripts = new Map<string, Supervised>();
  private readonly listeners: Array<() => void> = [];
  private readonly opts: Required<ChildSupervisorOptions>;
  private readonly clock: Clock;

  constructor(
    private readonly log: Logger,
    opts: ChildSupervisorOptions = {},
  ) {
    this.opts = { baseBackoffMs: 500, maxBackoffMs: 30_000, stableAfterMs: 10_000, stopGraceMs: 3000, logBytes: 64 * 1024, clock: systemClock, ...opts };
    this.clock = this.opts.clock;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  async start(spec: ScriptProcessSpec): Promise<void> {
    const old = this.scripts.get(spec.scriptId);
    if (old) await this.stop(spec.scriptId);
    const s: Supervised = {
      spec,
      child: undefined,
      wanted: true,
      state: { state: 'stopped', since: now(), restarts: 0 },
      output: old?.output ?? new OutputRing(this.opts.logBytes),
      backoffMs: this.opts.baseBackoffMs,
      startedAt: 0,
      timer: undefined,
      exited: Promise.resolve(),
    };
    this.scripts.set(spec.scriptId, s);
    s.output.push(`--- ${now()} starting ${spec.name} (${spec.file}) on port ${spec.port}\n`);
    this.launch(s);
  }

  resume(spec: ScriptProcessSpec): Promise<void> {
    return this.start(spec);
  }

  async stop(scriptId: string): Promise<void> {
    const s = this.scripts.get(scriptId);
    if (!s) return;
    s.wanted = false;
    this.clock.clearTimeout(s.timer);
    s.timer = undefined;
    const child = s.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      signalGroup(child, 'SIGTERM');
      const kill = this.clock.setTimeout(() => signalGroup(child, 'SIGKILL'), this.opts.stopGraceMs);
      await s.exited;
      this.clock.clearTimeout(kill);
    }
    this.setState(s, 'stopped');
  }

  async status(scriptId: string): Promise<SupervisedState> {
    return this.scripts.get(scriptId)?.state ?? { state: 'stopped', since: now(), restarts: 0 };
  }

  async alive(scriptId: string): Promise<boolean> {
    const s = this.scripts.get(scriptId);
    return Boolean(s && s.state.state === 'running' && s.state.restarts === 0 && s.child && s.child.exitCode === null);
  }

  async logs(scriptId: string): Promise<string> {
    return this.scripts.get(scriptId)?.output.text() ?? '';
  }

  async close(): Promise<void> {
    await Promise.all([...this.scripts.keys()].map((id) => this.stop(id)));
  }

  private launch(s: Supervised): void {
    const [command, ...args] = launchArgv(s.spec.file) as [string, ...string[]];
    let child: ChildProcess;
    try {
      // A program run by itself must be executable.
      if (command === s.spec.file) fs.chmodSync(s.spec.file, 0o755);
      child = spawn(command, args, {
        cwd: path.dirname(s.spec.file),
        // The simulated board has no camera: the webcam script shows its test pattern (an
        // operator's own MM_WEBCAM_SIMULATE=0 in the agent's environment wins).
        env: { MM_WEBCAM_SIMULATE: '1', ...process.env, PORT: String(s.spec.port), MM_SCRIPT_ID: s.spec.scriptId },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (err) {
      s.output.push(`--- could not start: ${(err as Error).message}\n`);
      this.crashed(s);
      return;
    }
    s.child = child;
    s.startedAt = this.clock.now();
    child.stdout?.on('data', (b: Buffer) => s.output.push(b));
    child.stderr?.on('data', (b: Buffer) => s.output.push(b));
    s.exited = new Promise<void>((resolve) => {
      child.once('error', (err) => {
        s.output.push(`--- could not start: ${err.message}\n`);
        if (child.pid === undefined) {
          resolve();
          if (s.child === child) this.crashed(s);
        }
      });
      child.once('exit', (code, signal) => {
        s.output.push(`--- ${now()} exited (${signal ?? `code ${code}`})\n`);
        resolve();
        if (s.child === child && s.wanted) this.crashed(s);
      });
    });
    if (child.pid !== undefined) this.setState(s, 'running', s.state.restarts);
  }

  /** Exited while wanted: `failed` during the backoff, then started again. */
  private crashed(s: Supervised): void {
    s.child = undefined;
    if (this.clock.now() - s.startedAt > this.opts.stableAfterMs) s.backoffMs = this.opts.baseBackoffMs;
    this.setState(s, 'failed', s.state.restarts);
    const delay = s.backoffMs;
    s.backoffMs = Math.min(this.opts.maxBackoffMs, s.backoffMs * 2);
    this.log.info({ script_id: s.spec.scriptId, delay_ms: delay }, 'device script exited; restarting after a backoff');
    s.timer = this.clock.setTimeout(() => {
      s.timer = undefined;
      if (!s.wanted) return;
      s.state.restarts++;
      this.launch(s);
    }, delay);
    s.timer.unref();
  }

  private setState(s: Supervised, state: SupervisedState['state'], restarts = s.state.restarts): void {
    if (s.state.state === state && s.state.restarts === restarts) return;
    s.state = { state, since: now(), restarts };
    for (const l of this.listeners) l();
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* gone */
    }
  }
}
