import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { systemClock, type Clock, type RpcParams, type RpcResult, type ScriptState } from '@mm/protocol';
import { writeFileAtomic } from '../journal/atomic-write.ts';
import type { Logger } from '../logger.ts';
import { openUploadStream } from '../pac/upload-stream.ts';
import { RpcError, type RpcContext } from '../rpc/rpc-registry.ts';
import { staysUp, waitForPort } from './port-health.ts';
import type { ScriptProcessSpec, ScriptSupervisor } from './script-supervisor.ts';
import { scriptFolder, type ScriptsRoot } from './scripts-root.ts';

/** One version of a deployed script, as the agent keeps it. */
interface DeployedVersion {
  script_id: string;
  name: string;
  version: string;
  port: number;
  sha256: string;
  /** The program on disk (remote_dir/script_filename, under the scripts root). */
  file: string;
}

interface DeployedScript extends DeployedVersion {
  wanted: 'running' | 'stopped';
  /** The version before the last deploy: what a failed deploy puts back. */
  previous: DeployedVersion | null;
}

export interface ScriptManagerOptions {
  /** Where the agent keeps its list and the programs of the versions it may put back. */
  agentDir: string;
  scripts: ScriptsRoot;
  supervisor: ScriptSupervisor;
  log: Logger;
  /** A deployed script's port: the relay may reach it from now on. */
  allowPort: (port: number) => void;
  /** The health check's deadline (default: the system clock). */
  clock?: Clock;
}

const LOG_TAIL_CHARS = 2000;

/**
 * The board's device scripts (docs/device-scripts.md): deploy (program by sha256, written
 * under MM_SCRIPTS_ROOT, started supervised, health-checked on its port, the previous
 * version put back when it does not come up), start/stop/restart, output, and their states
 * for `hello.scripts` / `scripts.state`. One change at a time.
 */
export class ScriptManager {
  private readonly deployed = new Map<string, DeployedScript>();
  private readonly listFile: string;
  private readonly programsDir: string;
  private readonly listeners: Array<() => void> = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: ScriptManagerOptions) {
    this.listFile = path.join(opts.agentDir, 'device-scripts.json');
    this.programsDir = path.join(opts.agentDir, 'script-programs');
    opts.supervisor.onChange(() => this.changed());
  }

  /** Reads what was deployed before and starts again what should run. */
  async init(): Promise<void> {
    await fsp.mkdir(this.programsDir, { recursive: true });
    let saved: DeployedScript[] = [];
    try {
      saved = JSON.parse(await fsp.readFile(this.listFile, 'utf8')) as DeployedScript[];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.opts.log.warn({ err }, 'could not read the deployed scripts list; starting with none');
    }
    for (const s of saved) {
      this.deployed.set(s.script_id, s);
      this.opts.allowPort(s.port);
      if (s.wanted === 'running') {
        await this.opts.supervisor.resume(specOf(s)).catch((err: unknown) => this.opts.log.warn({ err, script_id: s.script_id }, 'could not start a deployed script'));
      }
    }
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  async states(): Promise<ScriptState[]> {
    const out: ScriptState[] = [];
    for (const s of this.deployed.values()) out.push(await this.stateOf(s));
    return out;
  }

  deploy(params: RpcParams<'script.deploy'>, ctx: RpcContext): Promise<RpcResult<'script.deploy'>> {
    return this.serialized(() => this.deployNow(params, ctx));
  }

  control(params: RpcParams<'script.control'>): Promise<RpcResult<'script.control'>> {
    return this.serialized(async () => {
      const s = this.requireDeployed(params.script_id);
      if (params.action === 'stop') {
        await this.opts.supervisor.stop(s.script_id);
        s.wanted = 'stopped';
        await this.save();
        return { script: await this.stateOf(s) };
      }
      s.wanted = 'running';
      await this.save();
      await this.opts.supervisor.start(specOf(s));
      const health = await this.health(s, params.health_timeout_s, params.stable_s ?? 0);
      if (health !== 'up') throw new RpcError(health === 'unstable' ? 'script_unstable' : 'script_unhealthy', `${await this.unhealthyText(s, health, params)}.${await this.tail(s.script_id)}`);
      return { script: await this.stateOf(s) };
    });
  }

  async logs(scriptId: string): Promise<string> {
    this.requireDeployed(scriptId);
    return this.opts.supervisor.logs(scriptId);
  }

  async close(): Promise<void> {
    await this.opts.supervisor.close();
  }

  private async deployNow(p: RpcParams<'script.deploy'>, ctx: RpcContext): Promise<RpcResult<'script.deploy'>> {
    // Refused before anything is received or written.
    const folder = await scriptFolder(this.opts.scripts, p.remote_dir);
    const file = path.join(folder, p.filename);
    if (path.dirname(file) !== folder) throw new RpcError('invalid_params', `not a plain file name: ${JSON.stringify(p.filename)}`);
    const pulled = await this.obtain(p.sha256, p.size, p.upload_id, ctx);
    const current = this.deployed.get(p.script_id);
    const previous: DeployedVersion | null = current ? versionOf(current) : null;
    if (current) await this.opts.supervisor.stop(p.script_id);
    await this.writeProgram(p.sha256, file);
    const next: DeployedScript = { script_id: p.script_id, name: p.name, version: p.version, port: p.port, sha256: p.sha256, file, wanted: 'running', previous };
    this.opts.allowPort(p.port);
    await this.opts.supervisor.start(specOf(next));
    const health = await this.health(next, p.health_timeout_s, p.stable_s ?? 0);
    if (health === 'up') {
      this.deployed.set(p.script_id, next);
      await this.save();
      await this.prunePrograms();
      this.changed();
      ctx.log.info({ script_id: p.script_id, version: p.version, port: p.port }, 'device script deployed');
      return { script: await this.stateOf(next), path: p.remote_dir.replace(/\/+$/, '') + '/' + p.filename, pulled, previous_version: previous?.version ?? null };
    }
    // It did not come up, or did not stay up: its output says why; the previous version comes back (files and process).
    const tail = await this.tail(p.script_id);
    const why = await this.unhealthyText(next, health, p);
    await this.opts.supervisor.stop(p.script_id);
    let back = 'it was the first version, so nothing runs now';
    if (current && previous) {
      if (previous.file !== file) await fsp.rm(file, { force: true });
      await this.writeProgram(previous.sha256, previous.file);
      this.deployed.set(p.script_id, current);
      if (current.wanted === 'running') {
        await this.opts.supervisor.start(specOf(current));
        const up = await this.healthy(current, p.health_timeout_s);
        back = `version ${previous.version} is back${up ? ' and answers' : ' but does not answer either'}`;
      } else back = `version ${previous.version} is back (stopped, as it was)`;
    } else {
      await fsp.rm(file, { force: true });
      this.deployed.delete(p.script_id);
    }
    await this.save();
    this.changed();
    throw new RpcError(health === 'unstable' ? 'script_unstable' : 'script_unhealthy', `${why}: ${back}.${tail}`);
  }

  /** The program's bytes in the agent's keep (programs by sha256): pulled unless held already. */
  private async obtain(sha256: string, size: number, uploadId: string, ctx: RpcContext): Promise<boolean> {
    const kept = path.join(this.programsDir, sha256);
    const st = await fsp.stat(kept).catch(() => undefined);
    if (st && st.size === size) return false;
    const tmp = path.join(this.programsDir, `.${sha256}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const hash = createHash('sha256');
      const tap = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          cb(null, chunk);
        },
      });
      await pipeline(openUploadStream(uploadId, ctx), tap, fs.createWriteStream(tmp, { mode: 0o600 }));
      const got = hash.digest('hex');
      if (got !== sha256) throw new RpcError('checksum_mismatch', `the program's sha256 is ${got}, not ${sha256}`);
      await fsp.rename(tmp, kept);
      return true;
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  }

  /** Writes the kept program to `file` (a temporary file renamed over it: a symlink there is replaced, not followed). */
  private async writeProgram(sha256: string, file: string): Promise<void> {
    const tmp = `${file}.mm-${randomBytes(4).toString('hex')}.tmp`;
    try {
      await fsp.copyFile(path.join(this.programsDir, sha256), tmp);
      await fsp.chmod(tmp, 0o755);
      await fsp.rename(tmp, file);
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  }

  /** Keeps the programs of current and previous versions only. */
  private async prunePrograms(): Promise<void> {
    const used = new Set<string>();
    for (const s of this.deployed.values()) {
      used.add(s.sha256);
      if (s.previous) used.add(s.previous.sha256);
    }
    for (const name of await fsp.readdir(this.programsDir)) {
      if (/^[0-9a-f]{64}$/.test(name) && !used.has(name)) await fsp.rm(path.join(this.programsDir, name), { force: true });
    }
  }

  private healthy(s: DeployedVersion, timeoutS: number): Promise<boolean> {
    return waitForPort(s.port, timeoutS * 1000, () => this.opts.supervisor.alive(s.script_id), this.opts.clock ?? systemClock);
  }

  /**
   * `up`: it answered on its port within `timeoutS` and then stayed up `stableS` (issue 39: a
   * webcam that answered, then crashed and restarted in a loop, counted as deployed);
   * `no_answer` or `unstable` otherwise.
   */
  private async health(s: DeployedVersion, timeoutS: number, stableS: number): Promise<'up' | 'no_answer' | 'unstable'> {
    if (!(await this.healthy(s, timeoutS))) return 'no_answer';
    if (stableS <= 0) return 'up';
    return (await staysUp(stableS * 1000, () => this.opts.supervisor.alive(s.script_id), this.opts.clock ?? systemClock)) ? 'up' : 'unstable';
  }

  /** The sentence a failed health check starts with: what was expected, and the state the script was in. */
  private async unhealthyText(s: DeployedVersion, health: 'no_answer' | 'unstable', p: { health_timeout_s: number; stable_s?: number | undefined }): Promise<string> {
    if (health === 'no_answer') return `${s.name} ${s.version} did not answer on port ${s.port} within ${p.health_timeout_s} s`;
    const st = await this.opts.supervisor.status(s.script_id).catch(() => undefined);
    const state = st ? ` (it is ${st.state}${st.restarts ? ` after ${st.restarts} restart${st.restarts === 1 ? '' : 's'}` : ''})` : '';
    return `${s.name} ${s.version} answered on port ${s.port} but did not stay up for ${p.stable_s} s: it exited${state}`;
  }

  private async tail(scriptId: string): Promise<string> {
    const text = (await this.opts.supervisor.logs(scriptId).catch(() => '')).trimEnd();
    return text ? ` Its output ended with:\n${text.slice(-LOG_TAIL_CHARS)}` : '';
  }

  private async stateOf(s: DeployedScript): Promise<ScriptState> {
    const st = await this.opts.supervisor.status(s.script_id).catch(() => ({ state: 'failed' as const, since: new Date().toISOString(), restarts: 0 }));
    return { script_id: s.script_id, name: s.name, version: s.version, port: s.port, state: st.state, since: st.since, restarts: st.restarts };
  }

  private requireDeployed(scriptId: string): DeployedScript {
    const s = this.deployed.get(scriptId);
    if (!s) throw new RpcError('script_not_deployed', `device script ${scriptId} is not deployed on this board: deploy it first`);
    return s;
  }

  private async save(): Promise<void> {
    await writeFileAtomic(this.listFile, JSON.stringify([...this.deployed.values()], null, 2));
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}

function versionOf(s: DeployedScript): DeployedVersion {
  return { script_id: s.script_id, name: s.name, version: s.version, port: s.port, sha256: s.sha256, file: s.file };
}

function specOf(s: DeployedVersion): ScriptProcessSpec {
  return { scriptId: s.script_id, name: s.name, port: s.port, file: s.file };
}
