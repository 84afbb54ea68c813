import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OperationError } from '../operations/operation-errors.ts';
import { bitstreamFiles } from './bitstream-bundle.ts';

/** A line for the operation's log. */
export type Note = (line: string) => void;

/**
 * What the accelerator held before a run: a bitstream and its overlay (put back with
 * fpgautil), or something its source puts back itself (an app, through dfx-mgr).
 */
export type HeldAccelerator =
  | { kind: 'bitstream'; bitstream: string; overlay: string | null }
  | {
      kind: 'other';
      description: string;
      /** Frees the FPGA for the run's bitstream (an app: unloaded through dfx-mgr); default `fpgautil -R`. */
      takeOff?(note: Note): Promise<void>;
      putBack(note: Note): Promise<void>;
    };

export function describeHeld(held: HeldAccelerator): string {
  return held.kind === 'other' ? held.description : `${basename(held.bitstream)}${held.overlay ? ' with its overlay' : ''}`;
}

/**
 * Where the accelerator's current state comes from. With dfx-mgr (docs/accelerators.md) it is
 * the active app, put back by loading it again; the simulated board reads its simulated FPGA.
 * A board that cannot say (no source) gets the run's overlay removed and nothing loaded.
 */
export interface AcceleratorStateSource {
  current(): Promise<HeldAccelerator | undefined>;
}

/** The hook the agent runs around an mm-runner run that has a bitstream (operation-manager.ts). */
export interface RunAccelerator {
  /** Whether this run's bitstream is the agent's to load (mm-runner runs; docs/runner.md). */
  applies(inputs: ReadonlyMap<string, string>): Promise<boolean>;
  /** Loads the bitstream; answers how to put back what was there. Throws OperationError. */
  load(bitstream: string, note: Note): Promise<{ restore(note: Note): Promise<boolean> }>;
}

export interface BitstreamSwapOptions {
  /** MM_FPGAUTIL as argv. */
  fpgautil: readonly string[];
  env?: NodeJS.ProcessEnv | undefined;
  state?: AcceleratorStateSource | undefined;
  /** A load or removal still running after this is killed. */
  timeoutMs?: number;
  applies(inputs: ReadonlyMap<string, string>): Promise<boolean>;
  /**
   * Where what must be put back is kept while a run holds the FPGA ($MM_AGENT_DIR/
   * accelerator-held.json): an agent that dies mid-run puts it back when it starts again
   * (`recover`). Only a bitstream and its overlay can be kept this way.
   */
  heldFile?: string;
}

const TOOL_OUTPUT_MAX = 4000;

/** What the held file says: the state to put back, or null (only the run's overlay to remove). */
type KeptHeld = { held: { bitstream: string; overlay: string | null } | null; since: string };

/**
 * Loads an invocation's raw bitstream (`.bit`, `.bin`, `.bit.bin`) with fpgautil before the
 * run and puts back what the accelerator held after it, whatever the run's end (success,
 * failure, cancel, timeout): the state source's answer from before the load (an app loaded
 * again, a bitstream and its overlay), else only the run's overlay removed.
 *
 * fpgautil's exit status is checked and so is its output ("successfully"): a load that prints
 * an error fails the run with `bitstream_load_failed` before the runner starts.
 */
export class BitstreamSwap implements RunAccelerator {
  constructor(private readonly opts: BitstreamSwapOptions) {}

  applies(inputs: ReadonlyMap<string, string>): Promise<boolean> {
    return this.opts.applies(inputs);
  }

  async load(bitstream: string, note: Note): Promise<{ restore(note: Note): Promise<boolean> }> {
    // An archive with its overlay is unpacked (and checked) before the FPGA is touched.
    const unpacked = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bitstream-'));
    try {
      const files = await bitstreamFiles(bitstream, unpacked);
      const held = await this.opts.state?.current().catch((err: unknown) => {
        note(`could not read what the accelerator holds (${err instanceof Error ? err.message : String(err)}): it will not be put back`);
        return undefined;
      });
      note(held ? `the accelerator holds ${describeHeld(held)}: it is put back after the run` : 'what the accelerator holds is not known: after the run only its overlay is removed');
      // What is there goes first (its overlay, as fpgautil wants for a full bitstream; an app through dfx-mgr).
      if (held?.kind === 'other' && held.takeOff) await held.takeOff(note);
      else await this.fpgautil(['-R'], note).catch(() => undefined);
      const loaded = await this.fpgautil(['-b', files.bitstream, '-f', 'Full', ...(files.overlay ? ['-o', files.overlay] : [])], note);
      if (!loaded.ok || !/successfully/i.test(loaded.output)) {
        note(`loading the bitstream failed: ${loaded.output.trim() || loaded.why}`);
        await this.putBack(held, note);
        throw new OperationError('bitstream_load_failed', `fpgautil could not load the bitstream: ${(loaded.output.trim() || loaded.why).slice(-500)}`);
      }
      note(`loaded the run's bitstream ${basename(bitstream)}${files.overlay ? ' and its overlay' : ''} with fpgautil`);
      await this.keep(held);
      return {
        restore: async (n) => {
          const ok = await this.putBack(held, n);
          if (ok) await this.forget();
          return ok;
        },
      };
    } finally {
      await fsp.rm(unpacked, { recursive: true, force: true });
    }
  }

  /**
   * At the agent's start: a run that held the FPGA when the agent died (the held file is
   * there) has what it replaced put back. Answers what was done, for the log.
   */
  async recover(note: Note): Promise<boolean | undefined> {
    if (!this.opts.heldFile) return undefined;
    let kept: KeptHeld;
    try {
      kept = JSON.parse(await fsp.readFile(this.opts.heldFile, 'utf8')) as KeptHeld;
    } catch {
      return undefined;
    }
    note(`a run that loaded its own bitstream (${kept.since}) did not end before the agent stopped: putting the accelerator back`);
    const ok = await this.putBack(kept.held ? { kind: 'bitstream', ...kept.held } : undefined, note);
    if (ok) await this.forget();
    return ok;
  }

  private async keep(held: HeldAccelerator | undefined): Promise<void> {
    if (!this.opts.heldFile) return;
    const kept: KeptHeld = { held: held?.kind === 'bitstream' ? { bitstream: held.bitstream, overlay: held.overlay } : null, since: new Date().toISOString() };
    const tmp = `${this.opts.heldFile}.${process.pid}.tmp`;
    await fsp.writeFile(tmp, `${JSON.stringify(kept)}\n`);
    await fsp.rename(tmp, this.opts.heldFile);
  }

  private async forget(): Promise<void> {
    if (this.opts.heldFile) await fsp.rm(this.opts.heldFile, { force: true });
  }

  /** Puts `held` back (or removes the run's overlay); false when that failed. */
  private async putBack(held: HeldAccelerator | undefined, note: Note): Promise<boolean> {
    try {
      if (held?.kind === 'other') {
        await held.putBack(note);
        note(`put back ${held.description}`);
      } else if (held) {
        await this.fpgautil(['-R'], note).catch(() => undefined);
        const r = await this.fpgautil(['-b', held.bitstream, '-f', 'Full', ...(held.overlay ? ['-o', held.overlay] : [])], note);
        if (!r.ok || !/successfully/i.test(r.output)) throw new Error(r.output.trim() || r.why);
        note(`put back ${describeHeld(held)}`);
      } else {
        await this.fpgautil(['-R'], note);
        note("removed the run's overlay (nothing known to put back)");
      }
      return true;
    } catch (err) {
      note(`could not put back ${held ? describeHeld(held) : 'the accelerator'}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  }

  /** Runs fpgautil with `args`; its output (stdout and stderr) and whether it exited 0. */
  async fpgautil(args: readonly string[], _note?: Note): Promise<{ ok: boolean; output: string; why: string }> {
    const [command = 'fpgautil', ...lead] = this.opts.fpgautil;
    return new Promise((resolve) => {
      execFile(command, [...lead, ...args], { env: this.opts.env ?? process.env, timeout: this.opts.timeoutMs ?? 60_000, maxBuffer: 1024 * 1024, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
        const output = `${stdout}${stderr}`.slice(-TOOL_OUTPUT_MAX);
        if (!err) return resolve({ ok: true, output, why: '' });
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        const why = e.killed ? `fpgautil did not finish within ${(this.opts.timeoutMs ?? 60_000) / 1000} s` : e.code === 'ENOENT' ? `${command} is not installed (MM_FPGAUTIL)` : `fpgautil exited with status ${e.code}`;
        resolve({ ok: false, output, why });
      });
    });
  }
}

/** Whether the file is an mm-runner parameter file (JSON whose `schema` is mm-runner/1); at most 4 MiB is read. */
export async function isRunnerParameterFile(file: string | undefined): Promise<boolean> {
  if (!file) return false;
  try {
    const st = await fsp.stat(file);
    if (!st.isFile() || st.size > 4 * 1024 * 1024) return false;
    const raw = JSON.parse(await fsp.readFile(file, 'utf8')) as unknown;
    return typeof raw === 'object' && raw !== null && (raw as { schema?: unknown }).schema === 'mm-runner/1';
  } catch {
    return false;
  }
}

function basename(file: string): string {
  return file.split('/').pop() ?? file;
}
