import type { Clock, TimerHandle } from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { OperationError, OperationObject, OperationRow } from './operation-object.ts';
import { clearBoardOffline, noteBoardOffline, runningWithBoards, storeLateResult } from './store.ts';

/**
 * A board lost mid-run (docs/fleet.md, "A board lost mid-run"): every replica looks, on the
 * Clock, at the running operations whose board is offline. The first look notes since when
 * (`board_offline_since`, from when the board was last heard of) and says so in the log; a
 * board back online clears it; a board offline for `MM_BOARD_LOST_S` fails the operation
 * `board_lost`, so its rollout and its followers (`mm ops logs -f`) go on. Each change is
 * one conditional UPDATE, so two replicas never both make it.
 */

export const BOARD_LOST = 'board_lost';

/** How often the watch looks: a tenth of MM_BOARD_LOST_S, between 1 and 10 s. */
export function boardLostSweepMs(lostMs: number): number {
  return Math.min(10_000, Math.max(1000, Math.round(lostMs / 10)));
}

export interface BoardLostDeps {
  db: Db;
  clock: Clock;
  links: Pick<BoardLinks, 'presenceOf'>;
  /** The Operations service (its `finish` and `appendLog`; named structurally, so no import cycle). */
  operations: {
    finish(id: number, status: 'failed', result: unknown, error: OperationError | null): Promise<OperationObject | undefined>;
    appendLog(id: number, stream: 'server', data: string): Promise<void>;
  };
  log: Logger;
  /** MM_BOARD_LOST_S in ms. */
  lostMs: number;
}

export class BoardLostWatch {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: BoardLostDeps) {}

  start(): void {
    this.timer = this.deps.clock.setInterval(() => void this.tick(), boardLostSweepMs(this.deps.lostMs));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.deps.clock.clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.sweep()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not look for operations of boards gone offline'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** One look at every running operation that has a board (exported for tests through `tick`). */
  async sweep(): Promise<void> {
    const { db, clock, lostMs } = this.deps;
    const rows = await runningWithBoards(db);
    if (rows.length === 0) return;
    const presence = await this.deps.links.presenceOf([...new Set(rows.map((r) => r.boardId!))]);
    const now = clock.now();
    for (const r of rows) {
      const status = presence.get(r.boardId!)?.status ?? 'offline';
      if (status !== 'offline') {
        if (r.since) await this.backOnline(r.id);
        continue;
      }
      if (!r.since) {
        // Since it was last heard of, unless that is before the run started (or unknown): then now.
        const heard = r.lastSeenAt?.getTime();
        const started = r.startedAt?.getTime() ?? now;
        const since = new Date(heard !== undefined && heard >= started && heard <= now ? heard : now);
        const noted = await noteBoardOffline(db, r.id, since);
        if (noted) {
          await this.deps.operations.appendLog(
            r.id,
            'server',
            `board offline since ${since.toISOString()}; the operation fails ${BOARD_LOST} if it is not back by ${new Date(since.getTime() + lostMs).toISOString()}\n`,
          );
        }
        r.since = since;
      }
      if (now - r.since.getTime() >= lostMs) await this.giveUp(r.id, r.since);
    }
  }

  private async backOnline(id: number): Promise<void> {
    const cleared = await clearBoardOffline(this.deps.db, id);
    if (cleared) await this.deps.operations.appendLog(id, 'server', 'board back online\n');
  }

  private async giveUp(id: number, since: Date): Promise<void> {
    const seconds = Math.round(this.deps.lostMs / 1000);
    const ended = await this.deps.operations.finish(id, 'failed', null, {
      code: BOARD_LOST,
      message: `The board has been offline since ${since.toISOString()} (MM_BOARD_LOST_S: ${seconds} s); what it reports later is kept as a note.`,
    });
    if (ended) this.deps.log.warn({ op_id: id, board_id: ended.board_id, offline_since: since.toISOString() }, 'operation failed: its board was lost');
  }
}

/**
 * The board reported the end of an operation already failed `board_lost` (its journal, at its
 * next hello): kept as `result.late_result`, the status stays. Once (the first report wins).
 */
export async function noteLateResult(
  db: Db,
  row: OperationRow,
  outcome: { status: string; error?: { code: string; message: string } | null; finished_at?: string; result?: unknown },
  at: Date,
): Promise<boolean> {
  if (row.error?.code !== BOARD_LOST) return false;
  const metrics = (outcome.result as { metrics?: unknown } | null | undefined)?.metrics;
  const note = {
    status: outcome.status,
    error: outcome.error ?? null,
    finished_at: outcome.finished_at ?? null,
    reported_at: at.toISOString(),
    ...(metrics && typeof metrics === 'object' ? { metrics } : {}),
  };
  const done = await storeLateResult(db, row.id, note);
  return done;
}
