import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { OperationOutcome } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { writeFileAtomic } from './atomic-write.ts';

export const JournalOperation = z.object({
  op_id: z.number().int().positive(),
  kind: z.enum(['transfer', 'execute']),
  invocation_id: z.number().int().positive(),
  /** `transfer` while files are pulled, `run` once the runner was started. */
  phase: z.enum(['transfer', 'run']),
  started_at: z.string(),
  /** The boot the operation started in: a recorded process means nothing after a reboot. */
  boot_id: z.string(),
  /** The runner's process group, and its leader's start time to tell it from a reused pid. */
  process: z.object({ pgid: z.number().int().positive(), start_time: z.string().nullable() }).nullable(),
});
export type JournalOperation = z.infer<typeof JournalOperation>;

const JournalFile = z.object({
  version: z.literal(1),
  operations: z.array(JournalOperation),
  outcomes: z.array(OperationOutcome),
});
type JournalFile = z.infer<typeof JournalFile>;

/**
 * What the agent must not forget across a crash: the operations it started (and in which
 * phase), and the outcomes of finished ones until the server acknowledges them. One JSON
 * file, rewritten whole and atomically (temporary file, fsync, rename) on every change,
 * changes applied one at a time. The journal is small: a few entries at most.
 */
export class Journal {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    private state: JournalFile,
  ) {}

  static async open(dir: string, log: Logger): Promise<Journal> {
    await fsp.mkdir(dir, { recursive: true });
    const file = path.join(dir, 'journal.json');
    let state: JournalFile = { version: 1, operations: [], outcomes: [] };
    const text = await fsp.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (text !== undefined) {
      let parsed: ReturnType<typeof JournalFile.safeParse> | undefined;
      try {
        parsed = JournalFile.safeParse(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      if (parsed?.success) {
        state = parsed.data;
      } else {
        // Keep the unreadable file for a human; an empty journal lets the agent work.
        const aside = `${file}.corrupt-${Date.now()}`;
        await fsp.rename(file, aside);
        log.error({ file: aside }, 'journal unreadable: moved aside, starting with an empty journal');
      }
    }
    return new Journal(file, state);
  }

  operations(): JournalOperation[] {
    return this.state.operations.map((o) => ({ ...o }));
  }

  operation(opId: number): JournalOperation | undefined {
    return this.state.operations.find((o) => o.op_id === opId);
  }

  /** Outcomes not yet acknowledged by the server, oldest first. */
  outcomes(): OperationOutcome[] {
    return [...this.state.outcomes];
  }

  outcome(opId: number): OperationOutcome | undefined {
    return this.state.outcomes.find((o) => o.op_id === opId);
  }

  recordStart(op: Omit<JournalOperation, 'phase' | 'process'>): Promise<void> {
    return this.update((s) => ({ ...s, operations: [...s.operations.filter((o) => o.op_id !== op.op_id), { ...op, phase: 'transfer', process: null }] }));
  }

  setPhase(opId: number, phase: JournalOperation['phase'], process: JournalOperation['process'] = null): Promise<void> {
    return this.update((s) => ({ ...s, operations: s.operations.map((o) => (o.op_id === opId ? { ...o, phase, process } : o)) }));
  }

  /** The operation ended: its entry becomes an outcome, in one write. */
  recordOutcome(outcome: OperationOutcome): Promise<void> {
    return this.update((s) => ({
      ...s,
      operations: s.operations.filter((o) => o.op_id !== outcome.op_id),
      outcomes: [...s.outcomes.filter((o) => o.op_id !== outcome.op_id), outcome],
    }));
  }

  /** The server has stored the outcome. */
  acknowledge(opId: number): Promise<void> {
    return this.update((s) => ({ ...s, outcomes: s.outcomes.filter((o) => o.op_id !== opId) }));
  }

  /** Forgets a started operation that has no outcome (a transfer the server will start again). */
  drop(opId: number): Promise<void> {
    return this.update((s) => ({ ...s, operations: s.operations.filter((o) => o.op_id !== opId) }));
  }

  private update(change: (s: JournalFile) => JournalFile): Promise<void> {
    const run = async () => {
      const next = change(this.state);
      await writeFileAtomic(this.file, JSON.stringify(next, null, 1) + '\n');
      this.state = next;
    };
    const result = this.writing.then(run);
    this.writing = result.catch(() => {});
    return result;
  }
}
