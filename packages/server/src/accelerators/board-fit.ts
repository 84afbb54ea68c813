import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/rows.ts';
import { selectorMatchesSql, type BoardSelector } from '../boards/board-selector.ts';

/**
 * Which boards a model fits (docs/accelerators.md, "The check before any byte moves"), as SQL
 * fragments the execute route and the fleet scheduler share, so both decide the same way:
 *
 * - a model's fingerprints: the `dpu_fingerprint`s of its `.xmodel` weights file's DPU
 *   subgraphs (`invocation_files.model`); none (no xmodel, a CPU-only one) fits every board;
 * - a board's fingerprint for a run: its `mm/dpu-fingerprint` label, unless the invocation
 *   `requires_app` an app that is not the board's active one (`mm/app`): then the fingerprint
 *   the board showed while that app was last active (`facts.accelerator.apps[].dpu_fingerprint`),
 *   else unknown;
 * - a board fits when that fingerprint is one of the model's; a board whose fingerprint is
 *   unknown is not refused (the run notes that the check was skipped).
 *
 * `b` is an SQL alias of a `boards` row, `inv` an SQL expression of an invocation id.
 */

const rows = queryRows;

/** SQL: the app the invocation's runs need (text, null for none). */
export function requiredAppSql(inv: SQL): SQL {
  return sql`(select i.requires_app from invocations i where i.id = ${inv})`;
}

/** SQL: the fingerprint board `b` has for a run needing `app` (text; null when unknown). */
export function boardFingerprintSql(b: SQL, app: SQL): SQL {
  return sql`(case when ${app} is null or ${b}.labels->>'mm/app' = ${app}
      then ${b}.labels->>'mm/dpu-fingerprint'
      else (select a->>'dpu_fingerprint' from jsonb_array_elements(
              case when jsonb_typeof(${b}.facts->'accelerator'->'apps') = 'array' then ${b}.facts->'accelerator'->'apps' else '[]'::jsonb end) a
            where a->>'name' = ${app} limit 1)
    end)`;
}

/** SQL: the invocation's weights hold DPU subgraphs with a fingerprint (boolean). */
export function modelNeedsDpuSql(inv: SQL): SQL {
  return sql`exists (select 1 from invocation_files f, jsonb_array_elements(case when jsonb_typeof(f.model->'dpu_subgraphs') = 'array' then f.model->'dpu_subgraphs' else '[]'::jsonb end) s
    where f.invocation_id = ${inv} and f.kind = 'weights' and s->>'dpu_fingerprint' is not null)`;
}

/** SQL: `fingerprint` is one of the invocation's model's (boolean; false for null). */
function modelHasSql(inv: SQL, fingerprint: SQL): SQL {
  return sql`exists (select 1 from invocation_files f, jsonb_array_elements(case when jsonb_typeof(f.model->'dpu_subgraphs') = 'array' then f.model->'dpu_subgraphs' else '[]'::jsonb end) s
    where f.invocation_id = ${inv} and f.kind = 'weights' and s->>'dpu_fingerprint' = ${fingerprint})`;
}

/**
 * SQL condition: board `b` may run invocation `inv`: the model needs no DPU, the board's
 * fingerprint for the run is unknown, or it is one of the model's. The fleet scheduler adds
 * it to its choice of waiting work for a board (fleet/scheduler-store.ts `assignToBoard`).
 */
export function boardMayRunSql(b: SQL, inv: SQL): SQL {
  const fingerprint = boardFingerprintSql(b, requiredAppSql(inv));
  return sql`(not ${modelNeedsDpuSql(inv)} or ${fingerprint} is null or ${modelHasSql(inv, fingerprint)})`;
}

/** SQL condition: board `b` is known to fit invocation `inv` (its fingerprint for the run is one of the model's). */
export function boardKnownToFitSql(b: SQL, inv: SQL): SQL {
  const fingerprint = boardFingerprintSql(b, requiredAppSql(inv));
  return sql`(${fingerprint} is not null and ${modelHasSql(inv, fingerprint)})`;
}

/** What an invocation's runs need of a board: its model's DPU fingerprints (none: any board) and its app. */
export interface RunNeeds {
  fingerprints: string[];
  requiresApp: string | null;
}

export async function runNeedsOf(db: Db, invocationId: number): Promise<RunNeeds> {
  const [row] = await rows(db, sql`select ${runNeedsColumnsSql(sql`${invocationId}::int`)}`);
  return runNeedsFromRow(row);
}

/** SQL: the columns `app` and `fingerprints` of the invocation's run needs (read back with runNeedsFromRow). */
export function runNeedsColumnsSql(inv: SQL): SQL {
  return sql`${requiredAppSql(inv)} as app,
      coalesce((select jsonb_agg(distinct s->>'dpu_fingerprint') from invocation_files f,
         jsonb_array_elements(case when jsonb_typeof(f.model->'dpu_subgraphs') = 'array' then f.model->'dpu_subgraphs' else '[]'::jsonb end) s
         where f.invocation_id = ${inv} and f.kind = 'weights' and s->>'dpu_fingerprint' is not null), '[]'::jsonb) as fingerprints`;
}

/** The run needs from a row holding runNeedsColumnsSql's columns. */
export function runNeedsFromRow(row: Record<string, unknown> | undefined): RunNeeds {
  const fingerprints = row?.['fingerprints'];
  return {
    fingerprints: (Array.isArray(fingerprints) ? fingerprints : typeof fingerprints === 'string' ? (JSON.parse(fingerprints) as unknown[]) : []).filter((f): f is string => typeof f === 'string').sort(),
    requiresApp: typeof row?.['app'] === 'string' ? (row['app'] as string) : null,
  };
}

/** A board's fingerprint for a run of the invocation (null: unknown), and its name. */
export async function boardFingerprintFor(db: Db, boardId: string, invocationId: number): Promise<{ name: string; fingerprint: string | null } | undefined> {
  const [row] = await rows(db, sql`select b.name, ${boardFingerprintSql(sql`b`, requiredAppSql(sql`${invocationId}::int`))} as fp from boards b where b.id = ${boardId}::uuid`);
  if (!row) return undefined;
  return { name: String(row['name']), fingerprint: typeof row['fp'] === 'string' ? (row['fp'] as string) : null };
}

export interface FittingBoard {
  id: string;
  name: string;
}

/** Registered boards known to fit the invocation's model (optionally only those a selector matches), oldest first. */
export async function fittingBoards(db: Db, invocationId: number, selector?: BoardSelector): Promise<FittingBoard[]> {
  const inv = sql`${invocationId}::int`;
  const found = await rows(
    db,
    sql`select b.id, b.name from boards b
      where not b.pending and ${boardKnownToFitSql(sql`b`, inv)}
        ${selector ? sql`and ${selectorMatchesSql(sql`b.labels`, selector)}` : sql``}
      order by b.created_at, b.id limit 100`,
  );
  return found.map((r) => ({ id: String(r['id']), name: String(r['name']) }));
}

/** Whether any registered board the selector matches may run the invocation (fits, or its fingerprint is unknown). */
export async function anyCandidate(db: Db, invocationId: number, selector: BoardSelector): Promise<boolean> {
  const found = await rows(
    db,
    sql`select 1 as ok from boards b where not b.pending and ${selectorMatchesSql(sql`b.labels`, selector)} and ${boardMayRunSql(sql`b`, sql`${invocationId}::int`)} limit 1`,
  );
  return found.length > 0;
}

/**
 * The apps that waiting selector work requires (for the scheduler's preference: an idle board
 * that already has one active goes first).
 */
export async function waitingRequiredApps(db: Db): Promise<Set<string>> {
  const found = await rows(db, waitingRequiredAppsSql());
  return new Set(found.map((r) => String(r['app'])));
}

/** SQL (a subquery with one column, `app`): the apps that waiting selector work requires. */
export function waitingRequiredAppsSql(): SQL {
  return sql`select distinct i.requires_app as app from operations o join invocations i on i.id = o.invocation_id
      where o.status = 'queued' and o.board_id is null and o.board_selector is not null and i.requires_app is not null limit 100`;
}

/** Boards in the scheduler's order, those whose active app (`mm/app`) some waiting work requires first (stable). */
export function preferBoardsWithRequiredApp<B extends { labels: Record<string, string> }>(boards: B[], apps: ReadonlySet<string>): B[] {
  if (apps.size === 0) return boards;
  const has = (b: B) => b.labels['mm/app'] !== undefined && apps.has(b.labels['mm/app']);
  return [...boards.filter(has), ...boards.filter((b) => !has(b))];
}
