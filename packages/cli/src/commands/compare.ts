import type { Command } from 'commander';
import { formatChangePercent, formatMetric, metricLabel } from '@mm/api-client';
import { say } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table } from '../format.ts';
import { positiveId, withContext } from './shared.ts';

/** What `mm compare` names: operations by id, or a rollout as `rollout:<id>` (also `rollout/<id>`, `r<id>`). */
export function parseCompareTargets(refs: readonly string[]): { operation_ids: number[] } | { rollout_id: number } {
  const rollouts = refs.map((r) => /^(?:rollout[:/]|r)(\d+)$/i.exec(r)?.[1]).filter((x): x is string => x !== undefined);
  if (rollouts.length > 0) {
    if (refs.length !== 1) throw new UsageError('Compare one rollout, or one or more operations, not both.');
    return { rollout_id: positiveId(rollouts[0]!, 'rollout id') };
  }
  return { operation_ids: refs.map((r) => positiveId(r, 'operation id')) };
}

function parseThreshold(value: string, previous: Record<string, number>): Record<string, number> {
  const m = /^([a-z][a-z0-9_]*)=([0-9]+(?:\.[0-9]+)?)%?$/.exec(value.trim());
  if (!m) throw new UsageError(`--threshold takes metric=percent, e.g. e2e_fps=2 (got ${JSON.stringify(value)}).`);
  return { ...previous, [m[1]!]: Number(m[2]) };
}

const VERDICT_MARK: Record<string, string> = { regressed: '✗ regressed', improved: '↑ improved', unchanged: '= unchanged', inconclusive: '? inconclusive' };

/** `mm compare <operation…|rollout:ID> --baseline NAME [--threshold m=pct] [--json]` (docs/results.md). */
export function registerCompare(program: Command): void {
  program
    .command('compare <target...>')
    .description('put the runs of operations (ids) or a rollout (rollout:ID) beside a baseline: per metric and board, the change and a verdict')
    .requiredOption('--baseline <name>', 'the baseline, by name or id')
    .option('--threshold <metric=percent>', 'the threshold of a metric (repeatable; default 3 %)', parseThreshold, {})
    .action(
      withContext(async (ctx, opts: { baseline: string; threshold: Record<string, number> }, targets: string[]) => {
        const body = { baseline: opts.baseline, ...parseCompareTargets(targets), ...(Object.keys(opts.threshold).length ? { thresholds: opts.threshold } : {}) };
        const c = await ctx.api.call(ctx.api.client.POST('/api/comparisons/', { body }));
        ctx.result(c, () => {
          say(`Against baseline ${c.baseline.name}: ${c.verdict.toUpperCase()}${c.rollout_id !== null ? ` (rollout ${c.rollout_id})` : ''}, operations ${c.operation_ids.join(', ')}`);
          const rows = c.metrics.flatMap((m) =>
            m.boards.map((b) => [
              metricLabel(m.metric),
              b.board_id.slice(0, 8),
              `${formatMetric(m.metric, b.baseline.median)} (n=${b.n.baseline})`,
              `${formatMetric(m.metric, b.current.median)} (n=${b.n.current})`,
              `${formatChangePercent(b.change_pct)}${b.ci95_pct ? ` [${formatChangePercent(b.ci95_pct[0])}, ${formatChangePercent(b.ci95_pct[1])}]` : ''}`,
              VERDICT_MARK[b.verdict] ?? b.verdict,
            ]),
          );
          if (rows.length) say(table(['METRIC', 'BOARD', 'BASELINE', 'CURRENT', 'CHANGE [95 % CI]', 'VERDICT'], rows));
          for (const m of c.metrics) if (m.verdict !== 'unchanged') say(`${metricLabel(m.metric)} (${m.better} is better, threshold ${m.threshold_pct} %): ${m.verdict}`);
          const differs = Object.entries(c.differs);
          if (differs.length) {
            say('What differs (baseline → current):');
            for (const [field, [b, cur]] of differs) say(`  ${field}: ${JSON.stringify(b)} → ${JSON.stringify(cur)}`);
          }
          if (c.skipped_metrics.length) say(`Not compared (direction unknown): ${c.skipped_metrics.join(', ')}`);
        });
      }),
    );
}
