/**
 * The comparison the control plane answers to `POST /api/comparisons/` (docs/results.md), and
 * what the CI gate reports about one `mm run`: its runs and that comparison. The Markdown
 * summary and the JUnit report are written from a `GateReport` alone (pure, no I/O).
 */
import { formatChangePercent, formatMetric } from '@mm/api-client';

export type Verdict = 'regressed' | 'improved' | 'unchanged' | 'inconclusive';

export interface Estimate {
  median: number;
  ci95: [number, number] | null;
}

export interface BoardComparison {
  board_id: string;
  baseline: Estimate | null;
  current: Estimate | null;
  change_pct: number | null;
  ci95_pct: [number, number] | null;
  verdict: Verdict;
}

export interface MetricComparison {
  metric: string;
  better: 'higher' | 'lower';
  /** The threshold this metric was judged by, in percent. */
  threshold_pct?: number;
  boards: BoardComparison[];
  verdict: Verdict;
}

export interface Comparison {
  verdict: Verdict;
  metrics: MetricComparison[];
  /** Context fields that differ between the baseline's runs and these: `{ field: [baseline, current] }`. */
  differs: Record<string, [unknown, unknown]>;
  /** Metrics left out: their direction is unknown (the server names them). */
  skipped_metrics?: string[];
}

/** One board's run in this `mm run` (a rollout has one per board). */
export interface GateRun {
  board_id: string | null;
  board_name: string;
  operation_id: number | null;
  status: string;
  /** Why it failed, when it did. */
  error?: string | null;
  run_ms?: number | null;
}

export interface GateReport {
  /** What ran: `yolo (invocation 12)`. */
  title: string;
  baseline: string;
  /** Null when no run succeeded (nothing to compare). */
  comparison: Comparison | null;
  runs: GateRun[];
  /** Board names by id (the comparison names boards by id). */
  boardNames: Record<string, string>;
  /** `--threshold metric=percent` given to the comparison (the server's default is 3 %). */
  thresholds: Record<string, number>;
  /** Where the comparison can be seen (the dashboard), when known. */
  link?: string | null;
}

export const VERDICT_MARK: Record<Verdict, string> = {
  regressed: '❌',
  improved: '🟢',
  unchanged: '✅',
  inconclusive: '❔',
};

export const isRunFailure = (r: GateRun) => r.status !== 'succeeded';

export function boardName(report: Pick<GateReport, 'boardNames' | 'runs'>, boardId: string): string {
  return report.boardNames[boardId] ?? report.runs.find((r) => r.board_id === boardId)?.board_name ?? boardId;
}

/** Every board of the report, in a stable order: this run's boards first (as they ran), then any other the comparison names. */
export function reportBoards(report: GateReport): string[] {
  const ids: string[] = [];
  for (const r of report.runs) if (r.board_id && !ids.includes(r.board_id)) ids.push(r.board_id);
  for (const m of report.comparison?.metrics ?? []) for (const b of m.boards) if (!ids.includes(b.board_id)) ids.push(b.board_id);
  return ids;
}

/** Board-level regressions: `[metric, board]` pairs whose verdict is `regressed`. */
export function regressions(c: Comparison | null): Array<{ metric: MetricComparison; board: BoardComparison }> {
  return (c?.metrics ?? []).flatMap((metric) => metric.boards.filter((b) => b.verdict === 'regressed').map((board) => ({ metric, board })));
}

/** Whether the gate fails: the comparison's overall verdict (a metric regressed on two boards, or on the only one). */
export const regressed = (report: GateReport) => report.comparison?.verdict === 'regressed';

/** A board's figures for people: `30 fps → 27.1 fps (−9.7 %)`. */
export function changeText(metric: string, b: BoardComparison): string {
  const base = formatMetric(metric, b.baseline?.median);
  const cur = formatMetric(metric, b.current?.median);
  if (!b.baseline) return `${cur} (no baseline)`;
  if (!b.current) return `${base} → — (no run)`;
  return `${base} → ${cur} (${formatChangePercent(b.change_pct)})`;
}

/** The 95 % interval of the change, `[−1.2 %, +0.8 %]`, or '' when the server gave none. */
export function intervalText(b: BoardComparison): string {
  return b.ci95_pct ? `[${formatChangePercent(b.ci95_pct[0])}, ${formatChangePercent(b.ci95_pct[1])}]` : '';
}

/** A context value (`differs`) as text. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
