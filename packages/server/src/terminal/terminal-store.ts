import { and, desc, eq, inArray, isNotNull, isNull, lt, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { terminalSessions } from '../db/schema.ts';

/** A terminal session as the API shows it (`GET /api/terminal-sessions/`). */
export interface TerminalSessionObject {
  id: string;
  board_id: string;
  board_name: string;
  user_id: string | null;
  username: string | null;
  started_at: string;
  ended_at: string | null;
  exit_code: number | null;
  end_reason: string | null;
  cols: number;
  rows: number;
  recording_bytes: number;
  recording_truncated: boolean;
}

type Row = typeof terminalSessions.$inferSelect;

function toObject(r: Omit<Row, 'recording'>): TerminalSessionObject {
  return {
    id: r.id,
    board_id: r.boardId,
    board_name: r.boardName,
    user_id: r.userId,
    username: r.username,
    started_at: r.startedAt.toISOString(),
    ended_at: r.endedAt?.toISOString() ?? null,
    exit_code: r.exitCode,
    end_reason: r.endReason,
    cols: r.cols,
    rows: r.rows,
    recording_bytes: r.recordingBytes,
    recording_truncated: r.recordingTruncated,
  };
}

const listed = {
  id: terminalSessions.id,
  boardId: terminalSessions.boardId,
  boardName: terminalSessions.boardName,
  userId: terminalSessions.userId,
  username: terminalSessions.username,
  startedAt: terminalSessions.startedAt,
  endedAt: terminalSessions.endedAt,
  exitCode: terminalSessions.exitCode,
  endReason: terminalSessions.endReason,
  cols: terminalSessions.cols,
  rows: terminalSessions.rows,
  replicaId: terminalSessions.replicaId,
  recordingBytes: terminalSessions.recordingBytes,
  recordingTruncated: terminalSessions.recordingTruncated,
};

/** The `terminal_sessions` table: the only code that touches it. */
export class TerminalStore {
  constructor(private readonly db: Db) {}

  async create(s: { boardId: string; boardName: string; userId: string | null; username: string | null; startedAt: Date; cols: number; rows: number; replicaId: string }): Promise<string> {
    const [row] = await this.db.insert(terminalSessions).values(s).returning({ id: terminalSessions.id });
    return row!.id;
  }

  async finish(id: string, end: { endedAt: Date; exitCode: number | null; endReason: string; recording: Buffer; truncated: boolean }): Promise<void> {
    await this.db
      .update(terminalSessions)
      .set({ endedAt: end.endedAt, exitCode: end.exitCode, endReason: end.endReason, recording: end.recording, recordingBytes: end.recording.length, recordingTruncated: end.truncated })
      .where(eq(terminalSessions.id, id));
  }

  async list(filter: { boardId?: string; limit: number }): Promise<TerminalSessionObject[]> {
    const where: SQL[] = [];
    if (filter.boardId) where.push(eq(terminalSessions.boardId, filter.boardId));
    const rows = await this.db
      .select(listed)
      .from(terminalSessions)
      .where(where.length ? and(...where) : undefined)
      .orderBy(desc(terminalSessions.startedAt))
      .limit(filter.limit);
    return rows.map(toObject);
  }

  async get(id: string): Promise<TerminalSessionObject | undefined> {
    const [row] = await this.db.select(listed).from(terminalSessions).where(eq(terminalSessions.id, id));
    return row ? toObject(row) : undefined;
  }

  async recording(id: string): Promise<{ session: TerminalSessionObject; recording: Buffer | null } | undefined> {
    const [row] = await this.db.select().from(terminalSessions).where(eq(terminalSessions.id, id));
    return row ? { session: toObject(row), recording: row.recording ? Buffer.from(row.recording) : null } : undefined;
  }

  /**
   * Sessions left open by a run that stopped without ending them (a crash): ended
   * `server_stopped`. Those of `replicaId`, or (undefined: the embedded database, one
   * process) all of them.
   */
  async closeLeftovers(replicaId: string | undefined, at: Date): Promise<number> {
    const rows = await this.db
      .update(terminalSessions)
      .set({ endedAt: at, endReason: 'server_stopped' })
      .where(and(replicaId === undefined ? undefined : eq(terminalSessions.replicaId, replicaId), isNull(terminalSessions.endedAt)))
      .returning({ id: terminalSessions.id });
    return rows.length;
  }

  /** Deletes at most `limit` ended sessions that ended before `cutoff`; answers how many went. */
  async prune(cutoff: Date, limit: number): Promise<number> {
    const old = await this.db
      .select({ id: terminalSessions.id })
      .from(terminalSessions)
      .where(and(isNotNull(terminalSessions.endedAt), lt(terminalSessions.endedAt, cutoff)))
      .limit(limit);
    if (old.length === 0) return 0;
    await this.db.delete(terminalSessions).where(inArray(terminalSessions.id, old.map((r) => r.id)));
    return old.length;
  }
}
