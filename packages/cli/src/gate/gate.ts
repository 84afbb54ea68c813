import fs from 'node:fs/promises';
import path from 'node:path';
import { formatChangePercent } from '@mm/api-client';
import type { Api } from '../api.ts';
import { allBoards } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { ApiProblemError, CliError, EXIT, UsageError } from '../errors.ts';
import { table } from '../format.ts';
import { type Comparison, type GateReport, type GateRun, VERDICT_MARK, boardName, isRunFailure, regressed, reportBoards } from './comparison.ts';
import { junitXml } from './junit-report.ts';
import { summaryMarkdown } from './summary-markdown.ts';

/** `mm run`'s CI gate flags (docs/ci-gate.md). */
export interface GateOptions {
  baseline?: string;
  failOnRegression?: boolean;
  summaryMd?: string;
  junit?: string;
  threshold: Record<string, number>;
  /** `--direction metric=higher|lower`: for metrics whose name does not say which way is better. */
  direction?: Record<string, 'higher' | 'lower'>;
}

/** `--threshold metric=percent` (repeatable, later wins). */
export function collectThreshold(value: string, thresholds: Record<string, number> = {}): Record<string, number> {
  const m = /^([a-z][a-z0-9_]*)=(\d+(?:\.\d+)?)%?$/.exec(value.trim());
  if (!m || !(Number(m[2]) > 0) || Number(m[2]) > 1000) {
    throw new UsageError(`A threshold is metric=percent, e.g. fps=5 (got ${JSON.stringify(value)}).`);
  }
  return { ...thresholds, [m[1]!]: Number(m[2]) };
}

/** `--direction metric=higher|lower` (repeatable, later wins). */
export function collectDirection(value: string, directions: Record<string, 'higher' | 'lower'> = {}): Record<string, 'higher' | 'lower'> {
  const m = /^([a-z][a-z0-9_]*)=(higher|lower)$/.exec(value.trim());
  if (!m) throw new UsageError(`A direction is metric=higher or metric=lower, e.g. top1_accuracy=higher (got ${JSON.stringify(value)}).`);
  return { ...directions, [m[1]!]: m[2] as 'higher' | 'lower' };
}

/** An integer option within bounds, or a usage error. */
export function intOption(min: number, max: number, flag: string) {
  return (value: string): number => {
    if (!/^\d{1,4}$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`${flag} takes a whole number from ${min} to ${max} (got ${JSON.stringify(value)}).`);
    return Number(value);
  };
}

/** Whether the gate is asked for; the flags that need a baseline without one are a usage error (exit 2). */
export function gateWanted(opts: GateOptions, run: { detach?: boolean }): boolean {
  const needsBaseline = [
    ['--fail-on-regression', opts.failOnRegression],
    ['--summary-md', opts.summaryMd],
    ['--junit', opts.junit],
    ['--threshold', Object.keys(opts.threshold).length > 0],
    ['--direction', Object.keys(opts.direction ?? {}).length > 0],
  ].filter(([, given]) => given).map(([flag]) => flag as string);
  if (opts.baseline === undefined) {
    if (needsBaseline.length) throw new UsageError(`${needsBaseline.join(', ')} compare with a baseline: give --baseline NAME.`);
    return false;
  }
  if (!opts.baseline.trim()) throw new UsageError('--baseline names a baseline (it must not be empty).');
  if (run.detach) throw new UsageError('--baseline compares the finished runs: it cannot go with --detach.', 'Compare later with `mm compare <operation|rollout> --baseline NAME`.');
  return true;
}

interface BaselineRow {
  id: number | string;
  name: string;
}

/**
 * Checks before anything runs that the baseline exists (a CI job should not spend board time
 * to learn that it was misspelt): an unknown name is a usage error, exit 2.
 */
export async function checkBaseline(api: Api, name: string, signal: AbortSignal): Promise<void> {
  try {
    await api.call(api.client.GET('/api/baselines/{id}/', { params: { path: { id: name } }, signal }));
    return;
  } catch (err) {
    if (!(err instanceof ApiProblemError) || err.status !== 404) throw err;
  }
  const rows: BaselineRow[] = [];
  for (;;) {
    const page = await api.call(api.client.GET('/api/baselines/', { params: { query: { limit: 1000, offset: rows.length } }, signal }));
    rows.push(...page.baselines);
    if (page.baselines.length === 0 || rows.length >= page.total || rows.length >= 10_000) break;
  }
  const known = rows.length ? `the baselines are ${rows.slice(0, 10).map((b) => b.name).join(', ')}${rows.length > 10 ? ', …' : ''}` : 'there are none yet';
  throw new UsageError(`No baseline is named ${JSON.stringify(name)} (${known}).`, 'Make one from good runs: POST /api/baselines/ { name, operation_ids }, or on the dashboard.');
}

/** `POST /api/comparisons/`: these runs against the baseline. */
export async function compareRuns(
  api: Api,
  baseline: string,
  target: { operation_ids: number[] } | { rollout_id: number },
  thresholds: Record<string, number>,
  directions: Record<string, 'higher' | 'lower'>,
  signal: AbortSignal,
): Promise<Comparison> {
  // A baseline is named by its name or its id (a name is never only digits).
  const body = {
    baseline: /^[1-9]\d{0,9}$/.test(baseline) ? Number(baseline) : baseline,
    ...target,
    ...(Object.keys(thresholds).length ? { thresholds } : {}),
    ...(Object.keys(directions).length ? { directions } : {}),
  };
  return (await api.call(api.client.POST('/api/comparisons/', { body, signal }))) as Comparison;
}

/** Board names by id, for the report (best effort: ids stand in when the list cannot be read). */
export async function boardNames(api: Api): Promise<Record<string, string>> {
  try {
    return Object.fromEntries((await allBoards(api)).map((b) => [b.id, b.name]));
  } catch {
    return {};
  }
}

/**
 * Compares the runs that succeeded with the baseline (none succeeded: nothing to compare),
 * and builds the report.
 */
export async function gateReport(
  ctx: CommandContext,
  opts: GateOptions & { baseline: string },
  what: { title: string; runs: GateRun[]; target: { operation_ids: number[] } | { rollout_id: number } },
): Promise<GateReport> {
  const succeeded = what.runs.filter((r) => !isRunFailure(r));
  let comparison: Comparison | null = null;
  if (succeeded.length) {
    ctx.progress.note(`comparing with baseline ${opts.baseline}`);
    comparison = await compareRuns(ctx.api, opts.baseline, what.target, opts.threshold, opts.direction ?? {}, ctx.signal);
  }
  const names = await boardNames(ctx.api);
  const runs = what.runs.map((r) => ({ ...r, board_name: (r.board_id && names[r.board_id]) || r.board_name }));
  return { title: what.title, baseline: opts.baseline, comparison, runs, boardNames: names, thresholds: opts.threshold, link: comparisonLink(ctx.api.server, opts.baseline, what.target) };
}

/**
 * The dashboard's comparison page for these runs (it is served by the control plane itself, at
 * `/compare?baseline=NAME&operations=1,2` or `&rollout=7`): the summary's link back.
 */
export function comparisonLink(server: string, baseline: string, target: { operation_ids: number[] } | { rollout_id: number }): string {
  const url = new URL('compare', server.endsWith('/') ? server : `${server}/`);
  url.searchParams.set('baseline', baseline);
  if ('rollout_id' in target) url.searchParams.set('rollout', String(target.rollout_id));
  else url.searchParams.set('operations', target.operation_ids.join(','));
  return url.toString();
}

/** Writes `--summary-md` (appended, as `$GITHUB_STEP_SUMMARY` expects) and `--junit` (replaced). */
export async function writeGateFiles(report: GateReport, opts: GateOptions): Promise<string[]> {
  const written: string[] = [];
  if (opts.summaryMd) {
    await fs.mkdir(path.dirname(path.resolve(opts.summaryMd)), { recursive: true });
    await fs.appendFile(opts.summaryMd, summaryMarkdown(report));
    written.push(path.resolve(opts.summaryMd));
  }
  if (opts.junit) {
    const file = path.resolve(opts.junit);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(`${file}.part`, junitXml(report));
    await fs.rename(`${file}.part`, file);
    written.push(file);
  }
  return written;
}

/** The comparison for a terminal: a board × metric table of verdicts and changes. */
export function gateText(report: GateReport): string {
  const c = report.comparison;
  const lines: string[] = [];
  if (!c) lines.push(`Baseline ${report.baseline}: no run succeeded, nothing compared.`);
  else {
    lines.push(`Baseline ${report.baseline}: ${VERDICT_MARK[c.verdict]} ${c.verdict}.`);
    if (c.metrics.length) {
      const rows = reportBoards(report).map((id) => [
        boardName(report, id),
        ...c.metrics.map((m) => {
          const b = m.boards.find((x) => x.board_id === id);
          return b ? `${b.verdict} ${formatChangePercent(b.change_pct)}` : null;
        }),
      ]);
      rows.push(['(all)', ...c.metrics.map((m) => m.verdict)]);
      lines.push(table(['BOARD', ...c.metrics.map((m) => m.metric.toUpperCase())], rows));
    }
    const differs = Object.entries(c.differs ?? {});
    if (differs.length) lines.push(`Differs from the baseline: ${differs.map(([k, [a, b]]) => `${k} ${JSON.stringify(a)} → ${JSON.stringify(b)}`).join('; ')}.`);
  }
  return lines.join('\n');
}

/**
 * Ends a gated `mm run`: writes the files, then prints the result (`doc` with the comparison
 * under `comparison`) — or, when the gate or a run fails, throws the error whose `--json`
 * document carries it all. A failed run is exit 1 whatever the comparison says; a regression
 * (the overall verdict) exit 5 with `--fail-on-regression`.
 */
export async function finishGate(
  ctx: CommandContext,
  report: GateReport,
  opts: GateOptions,
  doc: Record<string, unknown>,
  human: () => void,
  runFailure?: CliError,
): Promise<void> {
  const files = await writeGateFiles(report, opts);
  const full = { ...doc, baseline: report.baseline, comparison: report.comparison, verdict: report.comparison?.verdict ?? null, files_written: files };
  const showHuman = () => {
    human();
    say(gateText(report));
    for (const f of files) say(`Wrote ${f}`);
  };
  let failure = runFailure;
  if (!failure && opts.failOnRegression && regressed(report)) {
    const which = report.comparison!.metrics.filter((m) => m.verdict === 'regressed').map((m) => m.metric);
    failure = new CliError(EXIT.regression, `Regression against baseline ${report.baseline}: ${which.join(', ') || 'see the comparison'}.`, 'Exit 5: the gate failed (--fail-on-regression).');
  }
  if (!failure) {
    ctx.result(full, showHuman);
    return;
  }
  if (!ctx.settings.json) showHuman();
  throw new CliError(failure.exitCode, failure.message, failure.hint, { ...failure.details, ...full });
}
