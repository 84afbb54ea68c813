import { and, eq, gt, inArray, notExists, sql, type SQLWrapper } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import type { StoreContext } from '../store-context.ts';
import { contents, deviceScriptPrograms, invocationFiles, invocations, operationFiles, operations, rolloutBoards, rollouts } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { OCTET_STREAM, sniffBlobContentType } from '../http/content-type.ts';
import { accelRedirectPath, type ServedFile } from '../http/file-response.ts';
import { plainFileName } from '../http/file-name.ts';
import type { ListedBlob } from '../storage/blob-store.ts';
import { ContentStore } from '../storage/content-store.ts';
import { lockContentPins, pinnedByAnyReplica } from '../storage/content-pins.ts';
import { type FileKind, type FileRecord, toFileRecord } from './invocation-records.ts';
import { readStoredModel } from '../accelerators/stored-model.ts';
import { checkStoredParameterFile } from './parameter-file-check.ts';
import { checkStoredVideo } from './video-check.ts';

export type InvocationFileRow = typeof invocationFiles.$inferSelect;

export interface AttachedFile {
  filename: string;
  sha256: string;
  size: number;
  /** Sniffed from the stored content (and filename) when left out. */
  contentType?: string;
}

/**
 * Records stored content as the invocation's file of that kind (contents row +
 * invocation_files row, replacing the old file of that kind and collecting content
 * nothing uses any more). Ends the store's pin on the content, whatever happens.
 * Throws the invocation's 404 when it does not exist (any more).
 */
export async function attachInvocationFile(
  ctx: StoreContext,
  invocationId: number,
  kind: FileKind,
  file: AttachedFile,
): Promise<FileRecord> {
  const { db } = ctx.database;
  // Every way a name enters cleans it already; this is the one place that stores it.
  file = { ...file, filename: plainFileName(file.filename) };
  let replaced: string | undefined;
  let row: InvocationFileRow;
  try {
    // Content another replica's collection took before this attach pinned it is refused in the
    // same words as the check under the row lock below (before the checks that read the bytes).
    if (!(await ctx.files.has(file.sha256))) throw new Error(`content ${file.sha256} is missing from the store`);
    // mm-runner's parameter file is checked before it is recorded (docs/runner.md): a bad one stores nothing.
    if (kind === 'parameter') await checkStoredParameterFile(ctx.files, file.sha256, file.size);
    // The input video must be one (a container's magic number): a `.txt` there is 400 `invalid_video`, nothing stored.
    if (kind === 'input_video') await checkStoredVideo(ctx.files, file.sha256, file.size, file.filename);
    const contentType = file.contentType ?? (await sniffBlobContentType(ctx.files, file.sha256, file.filename).catch(() => OCTET_STREAM));
    // A `.xmodel` weights file is read first (docs/accelerators.md): one that does not parse is refused, nothing recorded.
    const model = (await readStoredModel(ctx.files, kind, file.filename, file.sha256)) ?? null;
    ({ row, replaced } = await db.transaction(async (tx) => {
      // Lock the invocation: a concurrent delete either waits for this or has already won.
      const [inv] = await tx.select({ id: invocations.id }).from(invocations).where(eq(invocations.id, invocationId)).for('update');
      if (!inv) throw notFound.invocation(invocationId);
      // An upsert that always writes locks the contents row, so a concurrent collection of
      // the same content waits for this transaction and then sees the new reference.
      await tx
        .insert(contents)
        .values({ sha256: file.sha256, size: file.size })
        .onConflictDoUpdate({ target: contents.sha256, set: { size: sql`excluded.size` } });
      // Holding that lock, the bytes must be there (the pin kept them; this checks it).
      if (!(await ctx.files.has(file.sha256))) throw new Error(`content ${file.sha256} is missing from the store`);
      const [previous] = await tx
        .select({ sha256: invocationFiles.sha256 })
        .from(invocationFiles)
        .where(and(eq(invocationFiles.invocationId, invocationId), eq(invocationFiles.kind, kind)));
      const [written] = await tx
        .insert(invocationFiles)
        .values({ invocationId, kind, filename: file.filename, size: file.size, sha256: file.sha256, contentType, model })
        .onConflictDoUpdate({
          target: [invocationFiles.invocationId, invocationFiles.kind],
          set: { filename: file.filename, size: file.size, sha256: file.sha256, contentType, uploadedAt: sql`now()`, model },
        })
        .returning();
      await tx.update(invocations).set({ updatedAt: sql`now()` }).where(eq(invocations.id, invocationId));
      return { row: written!, replaced: previous?.sha256 };
    }));
  } catch (err) {
    await ctx.files.release(file.sha256);
    await collectUnusedContent(ctx, [file.sha256]);
    throw err;
  }
  await ctx.files.release(file.sha256);
  if (replaced && replaced !== file.sha256) await collectUnusedContent(ctx, [replaced]);
  return toFileRecord(row);
}

/** Removes the invocation's file of that kind; false when it had none. */
export async function detachInvocationFile(ctx: StoreContext, invocationId: number, kind: FileKind): Promise<boolean> {
  const removed = await ctx.database.db.transaction(async (tx) => {
    const [gone] = await tx
      .delete(invocationFiles)
      .where(and(eq(invocationFiles.invocationId, invocationId), eq(invocationFiles.kind, kind)))
      .returning({ sha256: invocationFiles.sha256 });
    if (gone) await tx.update(invocations).set({ updatedAt: sql`now()` }).where(eq(invocations.id, invocationId));
    return gone;
  });
  if (!removed) return false;
  await collectUnusedContent(ctx, [removed.sha256]);
  return true;
}

/** Gives back content an ingest stored but nobody recorded (e.g. a rejected upload). */
export async function discardIngestedContent(ctx: StoreContext, sha256: string): Promise<void> {
  await ctx.files.release(sha256);
  await collectUnusedContent(ctx, [sha256]);
}

/**
 * Deletes each content's row and file when no invocation file refers to it any more and no
 * replica holds a pin on it. The check, the row delete and the removal of the bytes run in
 * one transaction holding the contents row lock (an attach of the same bytes on any replica
 * waits for it) and the content's pin lock (a pin another replica takes before putting the
 * same bytes into place waits for it: storage/content-pins.ts), under the store's per-content
 * lock (see BlobStore.removeIfUnused), so an upload or an output of the same bytes, here or
 * on another replica, keeps them. Failures are logged, never thrown: the caller's change has
 * already happened, and the sweeps catch what is left. Resolves to how many went.
 */
export async function collectUnusedContent(ctx: StoreContext, shas: Iterable<string>): Promise<number> {
  const { db } = ctx.database;
  let collected = 0;
  for (const sha256 of new Set(shas)) {
    try {
      const gone = await ctx.files.removeIfUnused(sha256, (removeBytes) =>
        db.transaction(async (tx) => {
          await tx.select({ sha256: contents.sha256 }).from(contents).where(eq(contents.sha256, sha256)).for('update');
          const [used] = await tx
            .select({ one: sql<number>`1` })
            .from(invocationFiles)
            .where(eq(invocationFiles.sha256, sha256))
            .limit(1);
          if (used) return false;
          if (await keptAsRolloutOutput(tx, sha256)) return false;
          // A device script's program (docs/device-scripts.md) keeps its content too.
          const [program] = await tx.select({ one: sql<number>`1` }).from(deviceScriptPrograms).where(eq(deviceScriptPrograms.sha256, sha256)).limit(1);
          if (program) return false;
          // A run's results.jsonl (operation_files) keeps its content while the operation is kept.
          const [runFile] = await tx.select({ one: sql<number>`1` }).from(operationFiles).where(eq(operationFiles.sha256, sha256)).limit(1);
          if (runFile) return false;
          // Another replica wrote these bytes and is about to record them (the row it upserts
          // then is this one): they stay. Held until the commit, after the bytes went.
          await lockContentPins(tx, sha256);
          if (await pinnedByAnyReplica(tx, sha256)) return false;
          await tx.delete(contents).where(eq(contents.sha256, sha256));
          await removeBytes();
          return true;
        }),
      );
      if (gone) collected++;
    } catch (err) {
      ctx.log.warn({ err, sha256 }, 'could not collect unused content');
    }
  }
  return collected;
}

/**
 * The output video of a rollout's `execute` step (its operation's `result.output_video`):
 * every board's run attaches its output to the one invocation, each replacing the one
 * before, so a rollout keeps each board's output this way (downloadable per board) for as
 * long as the operation is kept.
 */
function rolloutOutputsOf(db: Pick<Db, 'select'>, sha256: SQLWrapper | string) {
  return db
    .select({ one: sql`1` })
    .from(rolloutBoards)
    .innerJoin(operations, eq(operations.id, rolloutBoards.operationId))
    .where(sql`${operations.kind} = 'execute' and ${operations.result} -> 'output_video' ->> 'sha256' = ${sha256}`);
}

/**
 * A `pac_install` (or `app_install`) rollout that names the content as its archive (`params.archive_sha256`):
 * the archive stays while the rollout is kept (retention prunes finished rollouts), so its
 * steps, and a retry, find it.
 */
function rolloutArchivesOf(db: Pick<Db, 'select'>, sha256: SQLWrapper | string) {
  return db
    .select({ one: sql`1` })
    .from(rollouts)
    .where(sql`${rollouts.kind} in ('pac_install', 'app_install') and ${rollouts.params} ->> 'archive_sha256' = ${sha256}`);
}

/**
 * Records content the server holds (and the caller has pinned) as a contents row, so the
 * orphan sweep leaves it; whoever refers to it (a rollout) keeps it from then on.
 */
export async function recordContent(ctx: StoreContext, sha256: string, size: number): Promise<void> {
  await ctx.database.db.insert(contents).values({ sha256, size }).onConflictDoUpdate({ target: contents.sha256, set: { size: sql`excluded.size` } });
}

async function keptAsRolloutOutput(tx: Pick<Db, 'select'>, sha256: string): Promise<boolean> {
  const [kept] = await rolloutOutputsOf(tx, sha256).limit(1);
  if (kept !== undefined) return true;
  const [archive] = await rolloutArchivesOf(tx, sha256).limit(1);
  return archive !== undefined;
}

/**
 * Stored content that no row records is left alone this long: it may be an upload (here or
 * on another replica sharing the store) between its write and its row, or a PAC archive
 * on its way to a board (those are never recorded).
 */
export const ORPHAN_GRACE_MS = 60 * 60_000;

export interface ContentSweepOptions {
  /** Content without a row younger than this stays (ORPHAN_GRACE_MS). */
  orphanGraceMs?: number;
}

/**
 * At startup, before anything else touches the store: removes leftover temp files (the
 * store's `init`, past its grace period) and then what `sweepOrphanContent` removes.
 */
export async function sweepContentStore(ctx: StoreContext, opts: ContentSweepOptions = {}): Promise<void> {
  await ctx.files.init();
  await sweepOrphanContent(ctx, opts);
}

/**
 * Removes content rows nothing refers to (their bytes go with them, or with the orphans
 * below) and stored content without a row that is older than the grace period. Safe while
 * the server runs and with several replicas on one store: each removal claims the content's
 * row in a transaction (an attach of those bytes on any replica waits for it) and checks the
 * age again there. Resolves to what it removed.
 */
export async function sweepOrphanContent(ctx: StoreContext, opts: ContentSweepOptions = {}): Promise<{ rows: number; files: number }> {
  const { db } = ctx.database;
  const graceMs = opts.orphanGraceMs ?? ORPHAN_GRACE_MS;
  // Rows nothing refers to, in pages, each collected under its row lock (a plain DELETE …
  // WHERE NOT EXISTS could race an attach on another replica); their bytes go with them.
  let rows = 0;
  for (let after = ''; ; ) {
    const page = await db
      .select({ sha256: contents.sha256 })
      .from(contents)
      .where(
        and(
          gt(contents.sha256, after),
          notExists(db.select({ one: sql`1` }).from(invocationFiles).where(eq(invocationFiles.sha256, contents.sha256))),
          notExists(rolloutOutputsOf(db, contents.sha256)),
          notExists(rolloutArchivesOf(db, contents.sha256)),
          notExists(db.select({ one: sql`1` }).from(deviceScriptPrograms).where(eq(deviceScriptPrograms.sha256, contents.sha256))),
          notExists(db.select({ one: sql`1` }).from(operationFiles).where(eq(operationFiles.sha256, contents.sha256))),
        ),
      )
      .orderBy(contents.sha256)
      .limit(500);
    if (!page.length) break;
    rows += await collectUnusedContent(ctx, page.map((r) => r.sha256));
    after = page.at(-1)!.sha256;
  }
  let orphans = 0;
  const prune = async (batch: ListedBlob[]) => {
    const cutoff = Date.now() - graceMs;
    const candidates = batch.filter((b) => b.modifiedAt.getTime() < cutoff);
    if (!candidates.length) return;
    const rows = await db
      .select({ sha256: contents.sha256 })
      .from(contents)
      .where(inArray(contents.sha256, candidates.map((b) => b.sha256)));
    const known = new Set(rows.map((r) => r.sha256));
    for (const { sha256 } of candidates) {
      if (known.has(sha256)) continue;
      const gone = await ctx.files
        .removeIfUnused(sha256, (removeBytes) => removeOrphan(ctx, sha256, graceMs, removeBytes))
        .catch((err: unknown) => {
          ctx.log.warn({ err, sha256 }, 'could not remove unrecorded content');
          return false;
        });
      if (gone) orphans++;
    }
  };
  let batch: ListedBlob[] = [];
  for await (const blob of ctx.files.list()) {
    batch.push(blob);
    if (batch.length === 500) {
      await prune(batch);
      batch = [];
    }
  }
  if (batch.length) await prune(batch);
  if (rows || orphans) {
    ctx.log.info({ rows, files: orphans }, 'removed unused content');
  }
  return { rows, files: orphans };
}

/**
 * Removes content no row records, holding a placeholder row for it meanwhile: any attach of
 * the same bytes (its upsert of the row) waits for this transaction. The bytes must still be
 * older than the grace period (an ingest of the same bytes refreshes them), and no replica may
 * hold a pin on them.
 */
async function removeOrphan(ctx: StoreContext, sha256: string, graceMs: number, removeBytes: () => Promise<void>): Promise<boolean> {
  return ctx.database.db.transaction(async (tx) => {
    const claimed = await tx.insert(contents).values({ sha256, size: 0 }).onConflictDoNothing().returning({ sha256: contents.sha256 });
    if (!claimed.length) return false; // recorded meanwhile
    await lockContentPins(tx, sha256);
    const pinned = await pinnedByAnyReplica(tx, sha256);
    const st = pinned ? undefined : await ctx.files.stat(sha256);
    const old = st !== undefined && st.modifiedAt.getTime() < Date.now() - graceMs;
    if (old) await removeBytes();
    await tx.delete(contents).where(eq(contents.sha256, sha256));
    return old;
  });
}

export async function invocationFileOf(ctx: StoreContext, invocationId: number, kind: FileKind): Promise<InvocationFileRow | undefined> {
  const [row] = await ctx.database.db
    .select()
    .from(invocationFiles)
    .where(and(eq(invocationFiles.invocationId, invocationId), eq(invocationFiles.kind, kind)));
  return row;
}

/**
 * Where a download of stored content gets its bytes: the blob store; with
 * MM_S3_REDIRECT_DOWNLOADS a presigned URL of the object store (Range honoured there); with
 * MM_ACCEL_REDIRECT and content on this server's disk, nginx (not an object store's).
 */
export function contentSource(ctx: StoreContext, sha256: string): Pick<ServedFile, 'open' | 'redirect' | 'accelRedirect'> {
  const { files, config } = ctx;
  return {
    open: ({ start, end }) => files.open(sha256, { start, end }),
    ...(files.downloadUrl
      ? {
          redirect: ({ contentType, contentDisposition }: { contentType: string; contentDisposition: string | undefined }) =>
            files.downloadUrl!(sha256, { contentType, contentDisposition: contentDisposition ?? 'attachment' }),
        }
      : {}),
    ...(config.accelRedirect !== undefined && files instanceof ContentStore
      ? { accelRedirect: accelRedirectPath(config.accelRedirect, ['content', sha256.slice(0, 2), sha256]) }
      : {}),
  };
}
