import { and, asc, eq, sql } from 'drizzle-orm';
import type { ScriptState } from '@mm/protocol';
import { boards, boardScripts, contents, deviceScriptPrograms, deviceScripts } from '../db/schema.ts';
import type { Db } from '../db/database.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { remoteDirRefusal } from './remote-dir.ts';
import { plainFileName } from '../http/file-name.ts';
import type { StoreContext } from '../store-context.ts';
import { deviceScriptNotFound, getDeviceScript } from './script-catalogue.ts';
import { DEVICE_SCRIPT_ID_PATTERN, type DeviceScriptRecord } from './device-scripts-schema.ts';
import { collectUnusedContent } from '../invocations/invocation-files.ts';

/** A device script's program of one version (docs/device-scripts.md). */
export interface ScriptProgram {
  script_id: string;
  version: string;
  filename: string;
  size: number;
  sha256: string;
  uploaded_at: string;
}

type ProgramRow = typeof deviceScriptPrograms.$inferSelect;

const toProgram = (r: ProgramRow): ScriptProgram => ({
  script_id: r.scriptId,
  version: r.version,
  filename: r.filename,
  size: r.size,
  sha256: r.sha256,
  uploaded_at: r.uploadedAt.toISOString(),
});

export const programNotFound = (id: string, version: string) =>
  new NotFoundError('script_program_not_found', `Device script ${id} has no program for version ${version}: upload one with PUT /api/device-scripts/${id}/file/.`);

/**
 * Records stored (and pinned) content as the program of the entry's current version,
 * replacing what that version had; other versions keep theirs. Ends the pin whatever happens.
 */
export async function attachScriptProgram(ctx: StoreContext, scriptId: string, file: { filename: string; sha256: string; size: number }): Promise<ScriptProgram> {
  const { db } = ctx.database;
  let replaced: string | undefined;
  let row: ProgramRow;
  try {
    ({ row, replaced } = await db.transaction(async (tx) => {
      const [script] = await tx.select({ version: deviceScripts.version }).from(deviceScripts).where(eq(deviceScripts.id, scriptId)).for('update');
      if (!script) throw deviceScriptNotFound(scriptId);
      await tx
        .insert(contents)
        .values({ sha256: file.sha256, size: file.size })
        .onConflictDoUpdate({ target: contents.sha256, set: { size: sql`excluded.size` } });
      if (!(await ctx.files.has(file.sha256))) throw new Error(`content ${file.sha256} is missing from the store`);
      const [previous] = await tx
        .select({ sha256: deviceScriptPrograms.sha256 })
        .from(deviceScriptPrograms)
        .where(and(eq(deviceScriptPrograms.scriptId, scriptId), eq(deviceScriptPrograms.version, script.version)));
      const values = { filename: plainFileName(file.filename), size: file.size, sha256: file.sha256 };
      const [written] = await tx
        .insert(deviceScriptPrograms)
        .values({ scriptId, version: script.version, ...values })
        .onConflictDoUpdate({ target: [deviceScriptPrograms.scriptId, deviceScriptPrograms.version], set: { ...values, uploadedAt: sql`now()` } })
        .returning();
      return { row: written!, replaced: previous?.sha256 };
    }));
  } catch (err) {
    ctx.files.release(file.sha256);
    await collectUnusedContent(ctx, [file.sha256]);
    throw err;
  }
  ctx.files.release(file.sha256);
  if (replaced && replaced !== file.sha256) await collectUnusedContent(ctx, [replaced]);
  return toProgram(row);
}

/** The program of `version` (default: the entry's current version), or undefined. */
export async function scriptProgramOf(db: Db, scriptId: string, version?: string): Promise<ScriptProgram | undefined> {
  if (!DEVICE_SCRIPT_ID_PATTERN.test(scriptId)) return undefined;
  const versionNow = version ?? (await db.select({ v: deviceScripts.version }).from(deviceScripts).where(eq(deviceScripts.id, scriptId)))[0]?.v;
  if (versionNow === undefined) return undefined;
  const [row] = await db
    .select()
    .from(deviceScriptPrograms)
    .where(and(eq(deviceScriptPrograms.scriptId, scriptId), eq(deviceScriptPrograms.version, versionNow)));
  return row ? toProgram(row) : undefined;
}

/** Every version's program of the entry, oldest upload first. */
export async function scriptPrograms(db: Db, scriptId: string): Promise<ScriptProgram[]> {
  if (!DEVICE_SCRIPT_ID_PATTERN.test(scriptId)) return [];
  const rows = await db.select().from(deviceScriptPrograms).where(eq(deviceScriptPrograms.scriptId, scriptId)).orderBy(asc(deviceScriptPrograms.uploadedAt));
  return rows.map(toProgram);
}

/** A deployed script as the board reported it (`GET /api/boards/<id>/scripts/`). */
export interface BoardScriptRecord extends ScriptState {
  board_id: string;
  board_name: string;
  reported_at: string;
}

type BoardScriptRow = typeof boardScripts.$inferSelect;

const toBoardScript = (r: BoardScriptRow, boardName: string): BoardScriptRecord => ({
  script_id: r.scriptId,
  name: r.name,
  version: r.version,
  port: r.port,
  state: r.state as ScriptState['state'],
  since: r.since.toISOString(),
  restarts: r.restarts,
  board_id: r.boardId,
  board_name: boardName,
  reported_at: r.reportedAt.toISOString(),
});

/** Replaces what is stored of the board's scripts with the agent's whole report. */
export async function recordBoardScripts(db: Db, boardId: string, scripts: ScriptState[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(boardScripts).where(eq(boardScripts.boardId, boardId));
    if (scripts.length === 0) return;
    await tx.insert(boardScripts).values(
      scripts.map((s) => ({
        boardId,
        scriptId: s.script_id,
        name: s.name,
        version: s.version,
        port: s.port,
        state: s.state,
        since: new Date(Number.isNaN(Date.parse(s.since)) ? Date.now() : Date.parse(s.since)),
        restarts: s.restarts,
      })),
    );
  });
}

/** The board's deployed scripts, by name. */
export async function boardScriptsOf(db: Db, boardId: string): Promise<BoardScriptRecord[]> {
  const rows = await db
    .select({ s: boardScripts, boardName: boards.name })
    .from(boardScripts)
    .innerJoin(boards, eq(boards.id, boardScripts.boardId))
    .where(eq(boardScripts.boardId, boardId))
    .orderBy(asc(boardScripts.name), asc(boardScripts.scriptId));
  return rows.map((r) => toBoardScript(r.s, r.boardName));
}

/** Where a script is deployed: every board that reports it, with its version and state. */
export async function scriptDeployments(db: Db, scriptId: string): Promise<BoardScriptRecord[]> {
  const rows = await db
    .select({ s: boardScripts, boardName: boards.name })
    .from(boardScripts)
    .innerJoin(boards, eq(boards.id, boardScripts.boardId))
    .where(eq(boardScripts.scriptId, scriptId))
    .orderBy(asc(boards.name));
  return rows.map((r) => toBoardScript(r.s, r.boardName));
}

/** The port the board reported for this script (the relay uses it), or undefined when it is not deployed there. */
export async function deployedPort(db: Db, boardId: string, scriptId: string): Promise<number | undefined> {
  const [row] = await db
    .select({ port: boardScripts.port })
    .from(boardScripts)
    .where(and(eq(boardScripts.boardId, boardId), eq(boardScripts.scriptId, scriptId)));
  return row?.port;
}

/**
 * What deploying a script needs before any operation is created, for one board or a rollout:
 * the entry (404 `device_script_not_found`), a folder the board may write (400
 * `script_dir_refused`) and a program for its current version (404).
 */
export async function requireDeployable(db: Db, scriptId: string): Promise<DeviceScriptRecord> {
  const script = await getDeviceScript(db, scriptId);
  const refusal = remoteDirRefusal(script.remote_dir, undefined);
  if (refusal) throw new BadRequestError('script_dir_refused', refusal);
  if (!(await scriptProgramOf(db, scriptId, script.version))) throw programNotFound(scriptId, script.version);
  return script;
}
