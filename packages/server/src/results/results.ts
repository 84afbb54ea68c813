/**
 * Baselines and comparisons (docs/results.md): a named set of runs, and new runs put beside it
 * per metric and board with a verdict. Reads operations (never writes them); tells
 * `regression.detected` through the `emit` it is given (webhooks sit above this folder).
 */
import { asc, count, eq, inArray } from 'drizzle-orm';
import { currentActor } from '../auth/request-auth.ts';
import type { Db } from '../db/database.ts';
import { pgErrorCode } from '../db/pg-error.ts';
import { baselines, operations, type BaselineRun, type RunContext } from '../db/schema.ts';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { runsOfResult, summarizeRuns } from './run-record.ts';
import type { Summary } from './stats.ts';
import { compareSamples, DEFAULT_THRESHOLD_PERCENT, metricDirection, metricVerdict, overallVerdict, type Better, type BoardComparison, type Verdict } from './verdicts.ts';

export type BaselineRow = typeof baselines.$inferSelect;

export interface BaselineObject {
  id: number;
  name: string;
  invocation_id: number | null;
  operation_ids: number[];
  runs: BaselineRun[];
  summary_by_board: Record<string, Record<string, Summary>>;
  contexts: Record<string, RunContext>;
  created_by: string | null;
  created_at: string;
}

export interface ComparisonRequest {
  baseline: string | number;
  operation_ids?: number[];
  rollout_id?: number;
  thresholds?: Record<string, number>;
  directions?: Record<string, Better>;
}

export interface ComparisonBoard extends BoardComparison {
  board_id: string;
  /** Whose baseline runs it was compared with: the same board's, the same board model's, or all of the baseline's. */
  baseline_from: 'board' | 'board_model' | 'all';
}

export interface ComparisonMetric {
  metric: string;
  better: Better;
  threshold_pct: number;
  boards: ComparisonBoard[];
  verdict: Verdict;
}

export interface Comparison {
  verdict: Verdict;
  baseline: { id: number; name: string };
  operation_ids: number[];
  rollout_id: number | null;
  metrics: ComparisonMetric[];
  /** Metrics in both whose better side is not known from the name nor given (`directions`). */
  skipped_metrics: string[];
  differs: Record<string, [unknown, unknown]>;
}

export type Emit = (type: string, data: Record<string, unknown>, opts: { key: string }) => Promise<unknown>;

interface RunsOf {
  operationIds: number[];
  runs: BaselineRun[];
  contexts: Record<string, RunContext>;
  invocationIds: Set<number>;
}

const isContext = (x: unknown): x is RunContext => !!x && typeof x === 'object' && 'files' in x;

/** Board id → metric → values. */
function byBoard(runs: readonly BaselineRun[]): Map<string, Map<string, number[]>> {
  const out = new Map<string, Map<string, number[]>>();
  for (const run of runs) {
    const board = run.board_id ?? 'unknown';
    const metrics = out.get(board) ?? out.set(board, new Map()).get(board)!;
    for (const [name, value] of Object.entries(run.metrics)) (metrics.get(name) ?? metrics.set(name, []).get(name)!).push(value);
  }
  return out;
}

export function toBaselineObject(row: BaselineRow): BaselineObject {
  const summary_by_board: Record<string, Record<string, Summary>> = {};
  const boards = new Map<string, BaselineRun[]>();
  for (const run of row.runs) (boards.get(run.board_id ?? 'unknown') ?? boards.set(run.board_id ?? 'unknown', []).get(run.board_id ?? 'unknown')!).push(run);
  for (const [board, runs] of boards) summary_by_board[board] = summarizeRuns(runs.map((r) => r.metrics));
  return {
    id: row.id,
    name: row.name,
    invocation_id: row.invocationId,
    operation_ids: row.operationIds,
    runs: row.runs,
    summary_by_board,
    contexts: row.contexts,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}

/** A value shown in `differs`: one value, or the sorted distinct values when the side holds several. */
function sideValue(values: unknown[]): unknown {
  const distinct = [...new Set(values.map((v) => JSON.stringify(v ?? null)))].sort().map((v) => JSON.parse(v) as unknown);
  return distinct.length === 1 ? distinct[0] : distinct;
}

const medianOf = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2 : null;
};

/** Start temperatures whose medians are closer than this are not a difference. */
const TEMPERATURE_DIFFERS_C = 5;

/**
 * What differs between the contexts of two sets of runs: each field (files by kind as
 * `files.<kind>`), the baseline's value and the current one. Board ids are left out (a
 * comparison is per board already); start temperatures count when their medians are
 * 5 °C or more apart.
 */
export function contextDiffers(baseline: readonly RunContext[], current: readonly RunContext[]): Record<string, [unknown, unknown]> {
  const flat = (c: RunContext): Record<string, unknown> => {
    const { files, board_id: _b, start_temperature_c: _t, ...rest } = c;
    return { ...Object.fromEntries(Object.entries(files ?? {}).map(([k, v]) => [`files.${k}`, v])), ...rest };
  };
  const b = baseline.map(flat);
  const c = current.map(flat);
  const fields = [...new Set([...b, ...c].flatMap((x) => Object.keys(x)))].sort();
  const out: Record<string, [unknown, unknown]> = {};
  for (const field of fields) {
    const bv = sideValue(b.map((x) => x[field]));
    const cv = sideValue(c.map((x) => x[field]));
    if (JSON.stringify(bv) !== JSON.stringify(cv)) out[field] = [bv, cv];
  }
  const temps = (cs: readonly RunContext[]) => medianOf(cs.map((x) => x.start_temperature_c).filter((t): t is number => typeof t === 'number'));
  const bt = temps(baseline);
  const ct = temps(current);
  if (bt !== null && ct !== null && Math.abs(bt - ct) >= TEMPERATURE_DIFFERS_C) out.start_temperature_c = [bt, ct];
  return out;
}

export class Results {
  constructor(private readonly deps: { db: Db; emit?: Emit }) {}

  /** The counted runs of execute operations that succeeded; `strict`: any other operation is a 400. */
  private async runsOf(operationIds: readonly number[], strict: boolean): Promise<RunsOf> {
    const ids = [...new Set(operationIds)];
    const rows = ids.length
      ? await this.deps.db
          .select({ id: operations.id, kind: operations.kind, status: operations.status, boardId: operations.boardId, invocationId: operations.invocationId, result: operations.result })
          .from(operations)
          .where(inArray(operations.id, ids))
          .orderBy(asc(operations.id))
      : [];
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw new NotFoundError('operation_not_found', `No operation ${missing.join(', ')}.`);
    const out: RunsOf = { operationIds: [], runs: [], contexts: {}, invocationIds: new Set() };
    for (const row of rows) {
      const runs = row.kind === 'execute' && row.status === 'succeeded' ? runsOfResult(row.result) : [];
      if (runs.length === 0) {
        if (strict) {
          throw new BadRequestError(
            'operation_not_comparable',
            `Operation ${row.id} is ${row.kind === 'execute' ? `an execute that ${row.status === 'succeeded' ? 'left no metrics' : `is ${row.status}`}` : `a ${row.kind}`}: only succeeded executes with metrics make results.`,
          );
        }
        continue;
      }
      out.operationIds.push(row.id);
      if (row.invocationId !== null) out.invocationIds.add(row.invocationId);
      for (const metrics of runs) out.runs.push({ operation_id: row.id, board_id: row.boardId, metrics });
      const context = (row.result as { context?: unknown } | null)?.context;
      if (isContext(context)) out.contexts[String(row.id)] = context;
    }
    return out;
  }

  // ── baselines ───────────────────────────────────────────────────────────────

  async createBaseline(input: { name: string; operation_ids: number[] }): Promise<BaselineObject> {
    const got = await this.runsOf(input.operation_ids, true);
    if (got.invocationIds.size > 1) {
      throw new BadRequestError('operation_not_comparable', `The operations ran ${got.invocationIds.size} different invocations (${[...got.invocationIds].join(', ')}); a baseline is the runs of one.`);
    }
    try {
      const [row] = await this.deps.db
        .insert(baselines)
        .values({
          name: input.name,
          invocationId: [...got.invocationIds][0] ?? null,
          operationIds: got.operationIds,
          runs: got.runs,
          contexts: got.contexts,
          createdBy: currentActor(),
        })
        .returning();
      return toBaselineObject(row!);
    } catch (err) {
      if (pgErrorCode(err) === '23505') throw new ConflictError('baseline_exists', `A baseline named ${JSON.stringify(input.name)} exists; delete it first or choose another name.`);
      throw err;
    }
  }

  async listBaselines(page: { limit: number; offset: number; invocationId?: number }): Promise<{ baselines: BaselineObject[]; total: number }> {
    const where = page.invocationId !== undefined ? eq(baselines.invocationId, page.invocationId) : undefined;
    const [rows, [counted]] = await Promise.all([
      this.deps.db.select().from(baselines).where(where).orderBy(asc(baselines.id)).limit(page.limit).offset(page.offset),
      this.deps.db.select({ n: count() }).from(baselines).where(where),
    ]);
    return { baselines: rows.map(toBaselineObject), total: counted?.n ?? 0 };
  }

  /** By id, or (a reference that is not a number) by name. */
  async requireBaseline(ref: string | number): Promise<BaselineObject> {
    const byId = typeof ref === 'number' || /^[0-9]{1,9}$/.test(ref);
    const [row] = await this.deps.db
      .select()
      .from(baselines)
      .where(byId ? eq(baselines.id, Number(ref)) : eq(baselines.name, String(ref)));
    if (!row) throw new NotFoundError('baseline_not_found', `No baseline ${JSON.stringify(ref)}.`);
    return toBaselineObject(row);
  }

  async deleteBaseline(ref: string | number): Promise<void> {
    const baseline = await this.requireBaseline(ref);
    await this.deps.db.delete(baselines).where(eq(baselines.id, baseline.id));
  }

  // ── comparisons ─────────────────────────────────────────────────────────────

  /**
   * New runs beside a baseline. `operationIds` named one by one must all be succeeded
   * executes; those of a rollout (`rolloutId`) that are not are left out.
   */
  async compare(req: ComparisonRequest & { operation_ids: number[] }, rolloutId: number | null = null): Promise<Comparison> {
    for (const [metric, pct] of Object.entries(req.thresholds ?? {})) {
      if (!(pct > 0 && pct <= 1000)) throw new ValidationError([{ field: `thresholds.${metric}`, message: 'a percentage above 0 and at most 1000' }]);
    }
    const baseline = await this.requireBaseline(req.baseline);
    const current = await this.runsOf(req.operation_ids, rolloutId === null);
    if (current.runs.length === 0) throw new BadRequestError('operation_not_comparable', 'None of the operations succeeded with metrics: nothing to compare.');

    const baseBoards = byBoard(baseline.runs);
    const curBoards = byBoard(current.runs);
    const modelOf = (contexts: Record<string, RunContext>) => {
      const m = new Map<string, string | null>();
      for (const c of Object.values(contexts)) if (c.board_id) m.set(c.board_id, c.board_model);
      return m;
    };
    const baseModels = modelOf(baseline.contexts);
    const curModels = modelOf(current.contexts);

    /** The baseline's values of a metric for a current board: its own, else its model's, else all. */
    const baselineFor = (board: string, metric: string): { values: number[]; from: ComparisonBoard['baseline_from'] } => {
      const own = baseBoards.get(board)?.get(metric);
      if (own?.length) return { values: own, from: 'board' };
      const model = curModels.get(board);
      if (model) {
        const pooled = [...baseBoards].filter(([b]) => baseModels.get(b) === model).flatMap(([, m]) => m.get(metric) ?? []);
        if (pooled.length) return { values: pooled, from: 'board_model' };
      }
      return { values: [...baseBoards.values()].flatMap((m) => m.get(metric) ?? []), from: 'all' };
    };

    const metricNames = [...new Set([...curBoards.values()].flatMap((m) => [...m.keys()]))].sort();
    const baseNames = new Set([...baseBoards.values()].flatMap((m) => [...m.keys()]));
    const metrics: ComparisonMetric[] = [];
    const skipped: string[] = [];
    for (const metric of metricNames) {
      if (!baseNames.has(metric)) continue;
      const better = req.directions?.[metric] ?? metricDirection(metric);
      if (!better) {
        skipped.push(metric);
        continue;
      }
      const threshold = req.thresholds?.[metric] ?? DEFAULT_THRESHOLD_PERCENT;
      const boards: ComparisonBoard[] = [];
      for (const [board, values] of [...curBoards].sort(([a], [b]) => a.localeCompare(b))) {
        const cur = values.get(metric);
        if (!cur?.length) continue;
        const base = baselineFor(board, metric);
        if (!base.values.length) continue;
        boards.push({ board_id: board, baseline_from: base.from, ...compareSamples(base.values, cur, better, threshold) });
      }
      if (boards.length) metrics.push({ metric, better, threshold_pct: threshold, boards, verdict: metricVerdict(boards.map((b) => b.verdict)) });
    }
    const comparison: Comparison = {
      verdict: overallVerdict(metrics.map((m) => m.verdict)),
      baseline: { id: baseline.id, name: baseline.name },
      operation_ids: current.operationIds,
      rollout_id: rolloutId,
      metrics,
      skipped_metrics: skipped,
      differs: contextDiffers(Object.values(baseline.contexts), Object.values(current.contexts)),
    };
    if (comparison.verdict === 'regressed') await this.tellRegression(comparison, req.thresholds ?? {});
    return comparison;
  }

  /** `regression.detected`, once per baseline, set of runs and thresholds (docs/webhooks.md). */
  private async tellRegression(c: Comparison, thresholds: Record<string, number>): Promise<void> {
    if (!this.deps.emit) return;
    const regressed = c.metrics
      .filter((m) => m.verdict === 'regressed')
      .map((m) => ({
        metric: m.metric,
        boards: m.boards.filter((b) => b.verdict === 'regressed').map((b) => ({ board_id: b.board_id, change_pct: b.change_pct, ci95_pct: b.ci95_pct })),
      }));
    const worst = regressed
      .map((m) => `${m.metric} ${m.boards.map((b) => `${b.change_pct !== null && b.change_pct > 0 ? '+' : ''}${b.change_pct?.toFixed(1) ?? '?'} %`).join(', ')}`)
      .join('; ');
    const key = `regression.detected:${c.baseline.id}:${c.rollout_id ?? ''}:${[...c.operation_ids].sort((a, b) => a - b).join(',')}:${JSON.stringify(Object.entries(thresholds).sort())}`;
    await this.deps.emit(
      'regression.detected',
      {
        summary: `${worst} against baseline ${c.baseline.name}`,
        baseline: c.baseline.name,
        baseline_id: c.baseline.id,
        ...(c.rollout_id !== null ? { rollout_id: c.rollout_id } : {}),
        ...(c.operation_ids.length === 1 ? { operation_id: c.operation_ids[0] } : {}),
        operation_ids: c.operation_ids.slice(0, 1000),
        regressed,
        differs: c.differs,
      },
      { key },
    );
  }
}
