import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { interpreterFor } from './script-launch.ts';
import type { ScriptProcessSpec, ScriptSupervisor, SupervisedState } from './script-supervisor.ts';

const run = promisify(execFile);

/** The template unit the agent package installs (deploy/agent/mm-device-script@.service). */
export const UNIT_TEMPLATE = 'mm-device-script@';
/** Where the unit reads each instance's settings (`EnvironmentFile=…/%i.env`). */
export const UNIT_ENV_DIR = '/var/lib/mm-agent/device-script-units';

const POLL_MS = 5000;

export interface SystemdSupervisorOptions {
  /** systemctl's argv prefix (default `sudo -n systemctl`, as the sudoers drop-in allows). */
  systemctl?: string[];
  journalctl?: string[];
  envDir?: string;
  /** The state poll (default: the system clock). */
  clock?: Clock;
}

/**
 * A real board's supervisor: each script is an instance of the template unit
 * `mm-device-script@<script id>.service` (restarted by systemd with a growing delay), whose
 * settings file names the program, its interpreter and PORT. The agent drives it with
 * systemctl, reads its state with `systemctl show` and its output from the journal.
 */
export class SystemdSupervisor implements ScriptSupervisor {
  private readonly listeners: Array<() => void> = [];
  private readonly baselineRestarts = new Map<string, number>();
  private readonly known = new Set<string>();
  private readonly last = new Map<string, string>();
  private readonly timer: TimerHandle;
  private readonly systemctl: string[];
  private readonly journalctl: string[];
  private readonly envDir: string;
  private readonly clock: Clock;

  constructor(
    private readonly log: Logger,
    opts: SystemdSupervisorOptions = {},
  ) {
    this.systemctl = opts.systemctl ?? ['sudo', '-n', 'systemctl'];
    this.journalctl = opts.journalctl ?? ['journalctl'];
    this.envDir = opts.envDir ?? UNIT_ENV_DIR;
    this.clock = opts.clock ?? systemClock;
    this.timer = this.clock.setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  async start(spec: ScriptProcessSpec): Promise<void> {
    this.known.add(spec.scriptId);
    await this.writeSettings(spec);
    await this.ctl('restart', spec.scriptId);
    this.baselineRestarts.set(spec.scriptId, (await this.show(spec.scriptId)).restarts);
    this.changed();
  }

  async resume(spec: ScriptProcessSpec): Promise<void> {
    this.known.add(spec.scriptId);
    const s = await this.show(spec.scriptId);
    this.baselineRestarts.set(spec.scriptId, s.restarts);
    if (s.active !== 'active') await this.start(spec);
  }

  async stop(scriptId: string): Promise<void> {
    await this.ctl('stop', scriptId);
    this.changed();
  }

  async status(scriptId: string): Promise<SupervisedState> {
    const s = await this.show(scriptId);
    const state = s.active === 'active' ? 'running' : s.active === 'inactive' || s.active === 'deactivating' ? 'stopped' : 'failed';
    return { state, since: s.since, restarts: Math.max(0, s.restarts - (this.baselineRestarts.get(scriptId) ?? 0)) };
  }

  async alive(scriptId: string): Promise<boolean> {
    const s = await this.show(scriptId);
    return s.active === 'active' && s.restarts === (this.baselineRestarts.get(scriptId) ?? s.restarts);
  }

  async logs(scriptId: string): Promise<string> {
    const [cmd, ...args] = this.journalctl as [string, ...string[]];
    const { stdout } = await run(cmd, [...args, '-u', unit(scriptId), '-n', '300', '--no-pager', '-o', 'short-iso'], { maxBuffer: 4 * 1024 * 1024 });
    return stdout;
  }

  async close(): Promise<void> {
    this.clock.clearInterval(this.timer);
  }

  private async writeSettings(spec: ScriptProcessSpec): Promise<void> {
    await fsp.mkdir(this.envDir, { recursive: true });
    const interpreter = interpreterFor(spec.file);
    if (!interpreter) await fsp.chmod(spec.file, 0o755);
    const lines = [
      `# mm-device-script@${spec.scriptId}: written by mm-agent at each deploy`,
      `MM_SCRIPT_NAME=${JSON.stringify(spec.name)}`,
      `MM_SCRIPT_PATH=${spec.file}`,
      `MM_SCRIPT_DIR=${path.dirname(spec.file)}`,
      `MM_SCRIPT_INTERPRETER=${interpreter ?? ''}`,
      `PORT=${spec.port}`,
    ];
    await fsp.writeFile(path.join(this.envDir, `${spec.scriptId}.env`), lines.join('\n') + '\n', { mode: 0o644 });
  }

  private async ctl(verb: 'restart' | 'stop', scriptId: string): Promise<void> {
    const [cmd, ...args] = this.systemctl as [string, ...string[]];
    await run(cmd, [...args, verb, unit(scriptId)]);
  }

  private async show(scriptId: string): Promise<{ active: string; restarts: number; since: string }> {
    const [cmd, ...args] = this.systemctl as [string, ...string[]];
    // `show` needs no privileges: plain systemctl when it is behind sudo.
    const argv = cmd === 'sudo' ? args.filter((a) => a !== '-n') : [cmd, ...args];
    const [showCmd, ...showArgs] = argv as [string, ...string[]];
    // TZ=UTC: timestamps as `Fri 2026-11-27 04:00:00 UTC`, which Date.parse reads (a local zone name it may not).
    const { stdout } = await run(showCmd, [...showArgs, 'show', unit(scriptId), '-p', 'ActiveState', '-p', 'NRestarts', '-p', 'StateChangeTimestamp'], { env: { ...process.env, TZ: 'UTC' } });
    const props = new Map(stdout.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
    const since = Date.parse(props.get('StateChangeTimestamp') ?? '');
    return {
      active: props.get('ActiveState') ?? 'inactive',
      restarts: Number(props.get('NRestarts') ?? 0) || 0,
      since: new Date(Number.isNaN(since) ? Date.now() : since).toISOString(),
    };
  }

  private async poll(): Promise<void> {
    let changed = false;
    for (const id of this.known) {
      try {
        const s = await this.status(id);
        const key = `${s.state}/${s.restarts}`;
        if (this.last.get(id) !== key) changed = true;
        this.last.set(id, key);
      } catch (err) {
        this.log.debug({ err, script_id: id }, 'could not read the unit state');
      }
    }
    if (changed) this.changed();
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}

const unit = (scriptId: string) => `${UNIT_TEMPLATE}${scriptId}.service`;
