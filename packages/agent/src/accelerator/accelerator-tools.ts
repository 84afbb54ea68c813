import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { AcceleratorFacts, AppList, AppRecord, DpuFacts, RpcResult } from '@mm/protocol';
import { installAppArchive } from './app-archive.ts';
import { AppError } from './app-errors.ts';
import { ListingUnrecognised, parseAppListing, parseLoadOutput, parseUnloadOutput, type AppListing } from './dfx-mgr-output.ts';
import { FingerprintMemory } from './fingerprint-memory.ts';
import { isMissing, runTool, type RunToolOptions, type ToolRun } from './run-tool.ts';
import { readVartTarget } from './vart-conf.ts';
import { DpuQueryUnrecognised, parseXdputilQuery } from './xdputil-output.ts';
import type { ToolChildren } from '../board/tool-children.ts';

/** A listing or a DPU query that takes longer than this is given up (a hung daemon). */
export const DEFAULT_QUERY_TIMEOUT_MS = 20_000;
/** How long an installed app may take to show in the listing (dfx-mgrd notices new folders by inotify). */
const LISTED_WITHIN_MS = 10_000;
const LISTED_POLL_MS = 250;
/** Tool output carried in an error message, at most (its tail). */
const MAX_OUTPUT_IN_ERROR = 8_000;

export interface AcceleratorToolOptions {
  /** MM_DFX_MGR_CLIENT, split into argv (a program and leading arguments, e.g. `sudo -n dfx-mgr-client`). */
  dfxMgrClient: readonly string[];
  /** MM_XMUTIL, likewise: used when dfx-mgr-client cannot be run. */
  xmutil: readonly string[];
  /** MM_XDPUTIL, likewise. */
  xdputil: readonly string[];
  /** MM_APPS_DIR: where app folders live (`/lib/firmware/xilinx`). */
  appsDir: string;
  /** The folder /etc/vart.conf is read under (MM_HOST_ROOT; the simulated board's tree). */
  hostRoot: string;
  /** The tools' environment (the agent's when left out). */
  env?: NodeJS.ProcessEnv | undefined;
  /** MM_APP_LOAD_TIMEOUT_S in ms: a load or unload still running after this is killed. */
  loadTimeoutMs: number;
  queryTimeoutMs?: number;
  /** Where the fingerprint each app showed is remembered. */
  memoryFile: string;
  /** The agent's running tools (ended when it stops). */
  children?: ToolChildren | undefined;
}

/** What printed the listing, and so loads and unloads. */
type Tool = 'dfx-mgr-client' | 'xmutil';

interface Listed {
  listing: AppListing;
  tool: Tool;
}

/** A DPU query: not possible (no xdputil), or what it answered. */
export type DpuAnswer = { available: false } | { available: true; dpu: DpuFacts | undefined; vaiVersion: string | undefined; output: string };

export type LoadAnswer = RpcResult<'app.load'>;
export type UnloadAnswer = RpcResult<'app.unload'>;
export type InstallAnswer = RpcResult<'app.install'>;

/** Writes a line of progress (the operation's log). */
export type Note = (text: string) => void;

/**
 * The board's accelerator tools (docs/accelerators.md): `dfx-mgr-client` (or `xmutil`, its
 * wrapper) for the apps, `xdputil` for the DPU, `/etc/vart.conf` for VART's target. Loads,
 * unloads and installs run one at a time; each is judged by what the tools print and by the
 * listing afterwards, never by exit statuses (the tools exit 0 whatever happened).
 */
export class AcceleratorTools {
  private exclusive: Promise<unknown> = Promise.resolve();
  /** A load, unload or install is running: facts taken meanwhile remember nothing. */
  private changing = 0;
  private readonly memory: FingerprintMemory;

  constructor(private readonly opts: AcceleratorToolOptions) {
    this.memory = new FingerprintMemory(opts.memoryFile);
  }

  get appsDir(): string {
    return this.opts.appsDir;
  }

  // ── reading ──────────────────────────────────────────────────────────────────────

  /** The listing, by dfx-mgr-client, else xmutil. */
  async list(): Promise<Listed> {
    const timeoutMs = this.opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    let run = await runTool(this.opts.dfxMgrClient, ['-listPackage'], this.toolOptions(timeoutMs));
    let tool: Tool = 'dfx-mgr-client';
    if (isMissing(run)) {
      run = await runTool(this.opts.xmutil, ['listapps'], this.toolOptions(timeoutMs));
      tool = 'xmutil';
    }
    if (isMissing(run)) {
      throw new AppError('app_tools_unavailable', `Neither dfx-mgr-client (${this.opts.dfxMgrClient.join(' ')}) nor xmutil (${this.opts.xmutil.join(' ')}) can be run on this board.`);
    }
    if (run.timedOut) throw new AppError('app_listing_unrecognised', `${run.command} did not answer within ${Math.round(timeoutMs / 1000)} s (is dfx-mgrd running?)`);
    try {
      return { listing: parseAppListing(run.stdout || run.output), tool };
    } catch (err) {
      if (err instanceof ListingUnrecognised) throw new AppError('app_listing_unrecognised', `${run.command}: ${err.message}${tail(run.output)}`);
      throw err;
    }
  }

  /** `xdputil query`: unavailable when xdputil is not there; otherwise the DPU it reports, if any. */
  async queryDpu(): Promise<DpuAnswer> {
    const run = await runTool(this.opts.xdputil, ['query'], this.toolOptions(this.opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS));
    if (isMissing(run)) return { available: false };
    try {
      const { dpu, vaiVersion } = parseXdputilQuery(run.output);
      return { available: true, dpu, vaiVersion, output: run.output };
    } catch (err) {
      if (err instanceof DpuQueryUnrecognised) return { available: true, dpu: undefined, vaiVersion: undefined, output: run.output };
      throw err;
    }
  }

  /**
   * The accelerator facts: undefined on a board with none of the tools (nothing to report).
   * An active app's DPU fingerprint is remembered for it.
   */
  async facts(): Promise<AcceleratorFacts | undefined> {
    const quiet = this.changing === 0;
    const [listed, dpu] = await Promise.all([this.list().catch((err: unknown) => (err instanceof AppError ? err : Promise.reject(err))), this.queryDpu()]);
    // After the tools: what they did (a board's first start loads its default app) is in it.
    const vart = await readVartTarget(this.opts.hostRoot);
    const apps = listed instanceof AppError ? undefined : listed.listing.apps;
    if (apps === undefined && !dpu.available && vart === undefined) return undefined;
    if (quiet && apps && dpu.available && dpu.dpu) await this.rememberActive(apps, dpu.dpu.fingerprint);
    return this.factsOf(apps ?? [], dpu, vart);
  }

  // ── changing ─────────────────────────────────────────────────────────────────────

  /** Makes `app` the active app (see rpc.ts `app.load`). */
  load(app: string, note: Note = () => {}): Promise<LoadAnswer> {
    checkName(app);
    return this.one(async () => {
      const output: string[] = [];
      const say = (text: string) => {
        output.push(text);
        note(text);
      };
      const before = await this.list();
      const target = before.listing.apps.find((a) => a.name === app);
      if (!target) {
        const names = before.listing.apps.map((a) => a.name);
        throw new AppError('app_not_found', `The board lists no app named ${JSON.stringify(app)} (it lists ${names.length ? names.join(', ') : 'none'}).`);
      }
      if (target.active) {
        say(`${app} is active already (slot ${target.slot ?? 0}): not loaded again\n`);
        const dpu = await this.queryDpu();
        const vart = await readVartTarget(this.opts.hostRoot);
        if (dpu.available && dpu.dpu) await this.memory.remember(app, dpu.dpu.fingerprint);
        const apps = await this.withMemory(before.listing.apps);
        return { ...this.listOf(apps, dpu, vart), app, loaded: false, slot: target.slot ?? 0, unloaded: [], dpu: dpu.available ? (dpu.dpu ?? null) : null, vart_target: vart ?? null, output: output.join('') };
      }
      const unloaded = await this.unloadAll(before, say, 'load');
      const run = await this.runLoad(before, app);
      say(describeRun(run));
      if (run.timedOut) {
        throw new AppError('app_load_timeout', `Loading ${app} did not finish within ${Math.round(this.opts.loadTimeoutMs / 1000)} s; the tool was killed.${tail(run.output)}`);
      }
      const outcome = parseLoadOutput(run.output);
      const after = await this.list();
      const loaded = after.listing.apps.find((a) => a.name === app && a.active);
      if (!loaded) {
        const others = after.listing.apps.filter((a) => a.active);
        if (outcome.kind === 'no_empty_slot' || others.length > 0) {
          throw new AppError('no_empty_slot', `${app} was not loaded: no empty slot${others.length ? ` (${others.map((a) => `${a.name} holds slot ${a.slot ?? 0}`).join(', ')})` : ''}.${tail(output.join(''))}`);
        }
        const why = outcome.kind === 'not_found' ? 'the tool found no such package' : outcome.kind === 'loaded' ? 'the tool said it loaded it, but the listing shows it inactive' : 'the listing shows it inactive afterwards';
        throw new AppError('app_load_failed', `${app} was not loaded: ${why}.${tail(output.join(''))}`);
      }
      const slot = loaded.slot ?? 0;
      say(`${app} is active in slot ${slot}\n`);
      const { dpu, vart } = await this.verify(app, loaded, say, output);
      const apps = await this.withMemory(after.listing.apps);
      return { ...this.listOf(apps, dpu, vart), app, loaded: true, slot, unloaded, dpu: dpu.available ? (dpu.dpu ?? null) : null, vart_target: vart ?? null, output: output.join('') };
    });
  }

  /** Unloads what is active (see rpc.ts `app.unload`). */
  unload(note: Note = () => {}): Promise<UnloadAnswer> {
    return this.one(async () => {
      const output: string[] = [];
      const say = (text: string) => {
        output.push(text);
        note(text);
      };
      const before = await this.list();
      const unloaded = await this.unloadAll(before, say, 'unload');
      if (unloaded.length === 0) say('no app is active: nothing to unload\n');
      const after = await this.list();
      const [dpu, vart] = await Promise.all([this.queryDpu(), readVartTarget(this.opts.hostRoot)]);
      return { ...this.listOf(await this.withMemory(after.listing.apps), dpu, vart), unloaded, output: output.join('') };
    });
  }

  /** Installs an app archive and lists again (see rpc.ts `app.install`). */
  install(source: Readable): Promise<InstallAnswer> {
    return this.one(async () => {
      const installed = await installAppArchive(source, { appsDir: this.opts.appsDir });
      let apps: AppRecord[] = [];
      let listed = false;
      const deadline = Date.now() + LISTED_WITHIN_MS;
      for (;;) {
        try {
          apps = (await this.list()).listing.apps;
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          break; // no tools here: installed, not listed
        }
        listed = apps.some((a) => a.name === installed.app);
        if (listed || Date.now() >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, LISTED_POLL_MS));
      }
      const [dpu, vart] = await Promise.all([this.queryDpu(), readVartTarget(this.opts.hostRoot)]);
      return { ...this.listOf(await this.withMemory(apps), dpu, vart), app: installed.app, files: installed.files, bytes: installed.bytes, shell_type: installed.shellType, listed, replaced: installed.replaced };
    });
  }

  // ── pieces ───────────────────────────────────────────────────────────────────────

  /** Runs one change at a time (loads, unloads, installs never overlap). */
  private one<T>(work: () => Promise<T>): Promise<T> {
    const run = this.exclusive.then(async () => {
      this.changing++;
      try {
        return await work();
      } finally {
        this.changing--;
      }
    });
    this.exclusive = run.catch(() => {});
    return run;
  }

  /** How each tool runs: the board's environment, a bound, and ended with the agent. */
  private toolOptions(timeoutMs: number): RunToolOptions {
    return { env: this.opts.env, timeoutMs, children: this.opts.children };
  }

  private async runLoad(listed: Listed, app: string): Promise<ToolRun> {
    const opts = this.toolOptions(this.opts.loadTimeoutMs);
    if (listed.tool === 'xmutil') return runTool(this.opts.xmutil, ['loadapp', app], opts);
    return runTool(this.opts.dfxMgrClient, listed.listing.style === 'ids' ? ['-loadByName', app] : ['-load', app], opts);
  }

  private async runUnload(listed: Listed, app: AppRecord): Promise<ToolRun> {
    const opts = this.toolOptions(this.opts.loadTimeoutMs);
    const slot = String(app.slot ?? 0);
    if (listed.tool === 'xmutil') return runTool(this.opts.xmutil, ['unloadapp', slot], opts);
    return runTool(this.opts.dfxMgrClient, listed.listing.style === 'ids' ? ['-unloadByName', app.name] : ['-remove', slot], opts);
  }

  /** Unloads every active app; throws when one is still active afterwards. */
  private async unloadAll(listed: Listed, say: Note, purpose: 'load' | 'unload'): Promise<string[]> {
    const holders = listed.listing.apps.filter((a) => a.active);
    if (holders.length === 0) return [];
    const outputs: string[] = [];
    for (const holder of holders) {
      say(`unloading ${holder.name} (slot ${holder.slot ?? 0})\n`);
      const run = await this.runUnload(listed, holder);
      const text = describeRun(run);
      outputs.push(text);
      say(text);
      if (run.timedOut) {
        const code = purpose === 'load' ? 'app_load_timeout' : 'app_unload_failed';
        throw new AppError(code, `Unloading ${holder.name} did not finish within ${Math.round(this.opts.loadTimeoutMs / 1000)} s; the tool was killed.${tail(run.output)}`);
      }
      if (parseUnloadOutput(run.output) === 'failed') say(`the unload of ${holder.name} reported an error\n`);
    }
    const after = await this.list();
    const still = after.listing.apps.filter((a) => a.active);
    if (still.length > 0) {
      const held = still.map((a) => `${a.name} still holds slot ${a.slot ?? 0}`).join(', ');
      if (purpose === 'load') throw new AppError('no_empty_slot', `No empty slot: ${held} after the unload.${tail(outputs.join(''))}`);
      throw new AppError('app_unload_failed', `The unload did not free the slot: ${held}.${tail(outputs.join(''))}`);
    }
    return holders.map((a) => a.name);
  }

  /**
   * After a load: where xdputil exists and the app carries an xclbin (a DPU reaches VART
   * through one), the DPU must answer; for an XRT_FLAT app with an xclbin, vart.conf must
   * point into the app's folder (dfx-mgrd rewrites it). The fingerprint is remembered.
   */
  private async verify(app: string, loaded: AppRecord, say: Note, output: string[]): Promise<{ dpu: DpuAnswer; vart: string | undefined }> {
    const folder = await this.folderOf(loaded);
    const content = folder ? await describeFolder(folder) : undefined;
    const dpu = await this.queryDpu();
    if (!dpu.available) say('xdputil is not available: the DPU is not checked\n');
    else if (dpu.dpu) say(`DPU ${dpu.dpu.arch}, fingerprint ${dpu.dpu.fingerprint}${dpu.vaiVersion ? `, Vitis AI ${dpu.vaiVersion}` : ''}\n`);
    else if (content?.xclbin) {
      throw new AppError('app_load_failed', `${app} is loaded in slot ${loaded.slot ?? 0}, but the DPU does not answer (xdputil query).${tail(output.join('') + dpu.output)}`);
    } else say('xdputil reports no DPU (the app has no xclbin: none expected)\n');
    const vart = await readVartTarget(this.opts.hostRoot);
    if (folder && content?.xclbin && content.shellType === 'XRT_FLAT') {
      if (!vart || !(await isInside(folder, vart))) {
        throw new AppError('app_load_failed', `${app} is loaded, but /etc/vart.conf points at ${vart ?? 'nothing'}, not at the app's xclbin in ${folder}.${tail(output.join(''))}`);
      }
      say(`vart.conf: ${vart}\n`);
    }
    if (dpu.available && dpu.dpu) await this.memory.remember(app, dpu.dpu.fingerprint);
    return { dpu, vart };
  }

  /** The app's folder under MM_APPS_DIR: `<name>`, or `<base>/<name>` for an accelerator of a DFX base. */
  private async folderOf(app: AppRecord): Promise<string | undefined> {
    const candidates = [path.join(this.opts.appsDir, app.name), ...(app.base ? [path.join(this.opts.appsDir, app.base)] : [])];
    for (const dir of candidates) {
      if (!isPlainName(path.basename(dir))) continue;
      const st = await fsp.stat(dir).catch(() => undefined);
      if (st?.isDirectory()) return dir;
    }
    return undefined;
  }

  private async rememberActive(apps: AppRecord[], fingerprint: string): Promise<void> {
    const active = apps.filter((a) => a.active);
    if (active.length === 1) await this.memory.remember(active[0]!.name, fingerprint);
  }

  private async withMemory(apps: AppRecord[]): Promise<AppRecord[]> {
    const known = await this.memory.all();
    return apps.map((a) => {
      const fp = known.get(a.name);
      return fp ? { ...a, dpu_fingerprint: fp } : a;
    });
  }

  private factsOf(apps: AppRecord[], dpu: DpuAnswer, vart: string | undefined): Promise<AcceleratorFacts> {
    return this.withMemory(apps).then((remembered) => ({
      ...(dpu.available && dpu.dpu ? { dpu: dpu.dpu } : {}),
      ...(dpu.available && dpu.vaiVersion ? { vai_version: dpu.vaiVersion } : {}),
      ...(vart ? { vart_target: vart } : {}),
      apps: remembered.slice(0, 256),
    }));
  }

  private listOf(apps: AppRecord[], dpu: DpuAnswer, vart: string | undefined): AppList {
    return {
      apps,
      active: apps.find((a) => a.active)?.name ?? null,
      accelerator: {
        ...(dpu.available && dpu.dpu ? { dpu: dpu.dpu } : {}),
        ...(dpu.available && dpu.vaiVersion ? { vai_version: dpu.vaiVersion } : {}),
        ...(vart ? { vart_target: vart } : {}),
        apps: apps.slice(0, 256),
      },
    };
  }

  /** `app.query`: the listing with the facts. */
  async query(): Promise<AppList> {
    const [listed, dpu] = await Promise.all([this.list(), this.queryDpu()]);
    const vart = await readVartTarget(this.opts.hostRoot);
    if (this.changing === 0 && dpu.available && dpu.dpu) await this.rememberActive(listed.listing.apps, dpu.dpu.fingerprint);
    return this.listOf(await this.withMemory(listed.listing.apps), dpu, vart);
  }
}

/** An app name as the tools take it: not empty, no leading '-', no control characters, no path separators. */
function checkName(app: string): void {
  // eslint-disable-next-line no-control-regex
  if (app.trim() === '' || app.startsWith('-') || /[\u0000-\u001f\u007f/\\]/.test(app) || app.length > 200) {
    throw new AppError('invalid_app_name', `not an app name: ${JSON.stringify(app)}`);
  }
}

function isPlainName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.startsWith('.');
}

/** What the verification needs to know of an app folder: whether it has an xclbin, its shell type. */
async function describeFolder(dir: string): Promise<{ xclbin: boolean; shellType: string | undefined }> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  const xclbin = names.some((n) => n.toLowerCase().endsWith('.xclbin'));
  let shellType: string | undefined;
  try {
    const doc = JSON.parse(await fsp.readFile(path.join(dir, 'shell.json'), 'utf8')) as { shell_type?: unknown };
    if (typeof doc.shell_type === 'string') shellType = doc.shell_type;
  } catch {
    shellType = undefined;
  }
  return { xclbin, shellType };
}

async function isInside(folder: string, file: string): Promise<boolean> {
  const real = async (p: string) => fsp.realpath(p).catch(() => path.resolve(p));
  const relative = path.relative(await real(folder), await real(file));
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** `$ command` and what it printed, for the log. */
function describeRun(run: ToolRun): string {
  const out = run.output.endsWith('\n') || run.output === '' ? run.output : `${run.output}\n`;
  const how = run.timedOut ? ' (killed: it did not finish in time)\n' : run.spawnError ? ` (could not run: ${run.spawnError.message})\n` : '';
  return `$ ${run.command}\n${out}${how}`;
}

function tail(output: string): string {
  const text = output.trim();
  if (!text) return '';
  return `\n${text.length > MAX_OUTPUT_IN_ERROR ? `…${text.slice(-MAX_OUTPUT_IN_ERROR)}` : text}`;
}
