/**
 * What an execute's result says of its runs (docs/results.md): `runs` (each counted run's
 * metrics, as the agent measured them), `summary` per metric, and `context` (what the result
 * depends on). Computed by the server from what the agent sent, so every result is summarized
 * the same way whatever agent version ran it. Imports nothing above db/ and boards/.
 */
import type { RunContext } from '../db/schema.ts';
import { storedAccelerator } from '../boards/accelerator-labels.ts';
import { summarize, type Summary } from './stats.ts';

export type { RunContext };

export type RunMetrics = Record<string, number>;

export const MAX_REPEAT = 100;
export const MAX_WARMUP = 20;

/** The `run` of an execute's op.start from its params (`repeat`, `warmup`); nothing for one plain run. */
export function runOf(params: Record<string, unknown> | null | undefined): { run?: { repeat: number; warmup: number } } {
  const repeat = typeof params?.repeat === 'number' ? params.repeat : 1;
  const warmup = typeof params?.warmup === 'number' ? params.warmup : 0;
  return repeat === 1 && warmup === 0 ? {} : { run: { repeat, warmup } };
}

const isMetrics = (x: unknown): x is RunMetrics =>
  !!x && typeof x === 'object' && !Array.isArray(x) && Object.values(x).every((v) => typeof v === 'number' && Number.isFinite(v));

/** The counted runs of a result: its `runs`, or (an agent of before repeats, one run) its `metrics`. */
export function runsOfResult(result: unknown): RunMetrics[] {
  const r = result as { runs?: unknown; metrics?: unknown } | null | undefined;
  if (Array.isArray(r?.runs)) return r.runs.filter(isMetrics);
  return isMetrics(r?.metrics) ? [r.metrics] : [];
}

/** Per metric: the summary of the runs that have it. */
export function summarizeRuns(runs: readonly RunMetrics[]): Record<string, Summary> {
  const byName = new Map<string, number[]>();
  for (const run of runs) for (const [name, value] of Object.entries(run)) (byName.get(name) ?? byName.set(name, []).get(name)!).push(value);
  return Object.fromEntries([...byName].sort(([a], [b]) => a.localeCompare(b)).map(([name, xs]) => [name, summarize(xs)]));
}

const str = (x: unknown): string | null => (typeof x === 'string' && x !== '' ? x : null);
const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/** What the run's context takes of its board's row. */
export interface BoardAtStart {
  facts: Record<string, unknown> | null;
  agentVersion: string | null;
  activePac: string | null;
  telemetry: unknown;
}

/**
 * The board's side of a run's context, from its row as read when the run starts (with the rest
 * of op.start: operations/store.ts `startSnapshot`); its app may change during the run: an app
 * the run loaded is put in at the end, `completeContext`.
 */
export function startContextOf(row: BoardAtStart | undefined, boardId: string, files: ReadonlyArray<{ kind: string; sha256: string }>): RunContext {
  const facts = row?.facts ?? {};
  const accel = storedAccelerator(facts);
  const active = accel?.apps.find((a) => a.active);
  const temps = Object.values((row?.telemetry as { temperatures_c?: Record<string, number> } | null)?.temperatures_c ?? {}).filter((t) => typeof t === 'number');
  return {
    files: Object.fromEntries([...files].sort((a, b) => a.kind.localeCompare(b.kind)).map((f) => [f.kind, f.sha256])),
    board_id: boardId,
    board_model: str(facts.board_model),
    active_pac: str(row?.activePac) ?? str(facts.active_pac),
    app: str(active?.name),
    dpu_fingerprint: str(accel?.dpu?.fingerprint),
    dpu_mhz: num(accel?.dpu?.frequency_mhz),
    agent_version: str(row?.agentVersion) ?? str(facts.agent_version),
    runner_version: null,
    // The board's last telemetry: the agent's own reading at the run's start replaces it.
    start_temperature_c: temps.length ? Math.max(...temps) : null,
  };
}

/** The context with what the agent reported of the run itself (its start temperature, the runner's version, an app it loaded). */
export function completeContext(context: RunContext, result: Record<string, unknown>, requiresApp: string | undefined): RunContext {
  return {
    ...context,
    ...(num(result.start_temperature_c) !== null ? { start_temperature_c: num(result.start_temperature_c) } : {}),
    ...(str(result.runner_version) ? { runner_version: str(result.runner_version) } : {}),
    ...(result.app_loaded === true && requiresApp ? { app: requiresApp } : {}),
  };
}

/** The fields `summary` and `context` of a succeeded (or failed, with runs) execute's result. */
export function describeRuns(result: Record<string, unknown>, context: RunContext | undefined, requiresApp: string | undefined): Record<string, unknown> {
  const runs = runsOfResult(result);
  const out: Record<string, unknown> = { runs, summary: summarizeRuns(runs) };
  if (context) out.context = completeContext(context, result, requiresApp);
  return out;
}
