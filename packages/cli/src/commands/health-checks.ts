import type { Command } from 'commander';
import { formatLabels, type Labels } from '@mm/api-client';
import { say } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table, when } from '../format.ts';
import { boardNames } from '../fleet-view.ts';
import { collectLabel } from './board-fleet.ts';
import { positiveId, withContext } from './shared.ts';

/** `--expect fps>=10`, `--expect latency_ms<=150`: a metric's bounds (repeatable). */
function collectExpect(value: string, expect: Record<string, { min?: number; max?: number }> = {}) {
  const m = /^([a-z][a-z0-9_]*)\s*(>=|<=)\s*(-?\d+(?:\.\d+)?)$/.exec(value.trim());
  if (!m) throw new UsageError(`--expect is metric>=number or metric<=number (got ${JSON.stringify(value)}).`);
  const [, name, op, n] = m;
  const bounds = { ...(expect[name!] ?? {}) };
  if (op === '>=') bounds.min = Number(n);
  else bounds.max = Number(n);
  return { ...expect, [name!]: bounds };
}

function expectText(expect: { metrics?: Record<string, { min?: number; max?: number }> } | undefined): string {
  const parts = Object.entries(expect?.metrics ?? {}).flatMap(([name, b]) => [
    ...(b.min !== undefined ? [`${name}>=${b.min}`] : []),
    ...(b.max !== undefined ? [`${name}<=${b.max}`] : []),
  ]);
  return parts.join(' ') || 'run succeeds';
}

interface CheckOptions {
  name?: string;
  invocation?: string;
  label: Labels;
  every?: string;
  expect?: Record<string, { min?: number; max?: number }>;
}

/** `30m`, `1h`, `90s`, `600` (seconds). */
function seconds(text: string): number {
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new UsageError(`--every is a duration like 90s, 30m, 1h (got ${JSON.stringify(text)}).`);
  const n = Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  if (n < 60) throw new UsageError('--every must be at least 60 s.');
  return n;
}

/** `mm health-checks ls|create|edit|rm|run|history` (docs/fleet.md, "Health checks"). */
export function registerHealthChecks(program: Command): void {
  const checks = program.command('health-checks').description("health checks: an invocation run on matching boards to keep their health (admin; run: operator)");
  checks
    .command('ls')
    .description('list health checks')
    .action(
      withContext(async (ctx) => {
        const list = await ctx.api.call(ctx.api.client.GET('/api/health-checks/', { params: { query: { limit: 1000 } } }));
        ctx.result(list, () => {
          if (list.health_checks.length === 0) {
            say('No health checks. Create one with: mm health-checks create --name smoke --invocation <id> --label k=v --every 1h');
            return;
          }
          say(
            table(
              ['ID', 'NAME', 'INVOCATION', 'BOARDS', 'EVERY', 'EXPECT'],
              list.health_checks.map((c) => [c.id, c.name, c.invocation_id, formatLabels(c.board_selector) || 'every board', `${c.interval_s} s`, expectText(c.expect)]),
            ),
          );
        });
      }),
    );
  const withFields = (c: Command) =>
    c
      .option('--name <name>', 'its name')
      .option('--invocation <id>', 'the invocation it runs')
      .option('--label <k=v>', 'boards it checks: those with this label (repeatable; all must match)', collectLabel, {})
      .option('--every <duration>', 'how often (at least 60 s): 90s, 30m, 1h')
      .option('--expect <bound>', 'a metric bound: fps>=10, latency_ms<=150 (repeatable)', collectExpect);
  withFields(checks.command('create').description('define a health check')).action(
    withContext(async (ctx, opts: CheckOptions) => {
      if (!opts.name || !opts.invocation || !opts.every) throw new UsageError('create needs --name, --invocation and --every (and --label for the boards).');
      const created = await ctx.api.call(
        ctx.api.client.POST('/api/health-checks/', {
          body: {
            name: opts.name,
            invocation_id: positiveId(opts.invocation, 'invocation id'),
            board_selector: opts.label,
            interval_s: seconds(opts.every),
            ...(opts.expect ? { expect: { metrics: opts.expect } } : {}),
          },
        }),
      );
      ctx.result(created, () => say(`Health check ${created.id} (${created.name}) created: invocation ${created.invocation_id} every ${created.interval_s} s on ${formatLabels(created.board_selector) || 'every board'}.`));
    }),
  );
  withFields(checks.command('edit <id>').description('change a health check (only what is given)')).action(
    withContext(async (ctx, opts: CheckOptions, id: string) => {
      const body = {
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.invocation !== undefined ? { invocation_id: positiveId(opts.invocation, 'invocation id') } : {}),
        ...(Object.keys(opts.label).length ? { board_selector: opts.label } : {}),
        ...(opts.every !== undefined ? { interval_s: seconds(opts.every) } : {}),
        ...(opts.expect ? { expect: { metrics: opts.expect } } : {}),
      };
      if (Object.keys(body).length === 0) throw new UsageError('Nothing to change: give --name, --invocation, --label, --every or --expect.');
      const updated = await ctx.api.call(ctx.api.client.PATCH('/api/health-checks/{id}/', { params: { path: { id: positiveId(id, 'health check id') } }, body }));
      ctx.result(updated, () => say(`Health check ${updated.id} (${updated.name}) updated.`));
    }),
  );
  checks
    .command('rm <id>')
    .description('delete a health check (its past runs stay)')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const n = positiveId(id, 'health check id');
        await ctx.api.call(ctx.api.client.DELETE('/api/health-checks/{id}/', { params: { path: { id: n } } }));
        ctx.result({ deleted: n }, () => say(`Deleted health check ${n}.`));
      }),
    );
  checks
    .command('run <id>')
    .description('run a health check now on every online board it matches')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const n = positiveId(id, 'health check id');
        const answer = await ctx.api.call(ctx.api.client.POST('/api/health-checks/{id}/run/', { params: { path: { id: n } } }));
        const names = await boardNames(ctx.api);
        ctx.result(answer, () => {
          say(`Health check ${n}: ${answer.runs.length} run${answer.runs.length === 1 ? '' : 's'} queued.`);
          for (const r of answer.runs) say(`  operation ${r.id} on ${(r.board_id && names.get(r.board_id)) ?? r.board_id}`);
        });
      }),
    );
  checks
    .command('history <id>')
    .description("a health check's latest runs")
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const n = positiveId(id, 'health check id');
        const page = await ctx.api.call(ctx.api.client.GET('/api/operations/', { params: { query: { health_check_id: n, limit: 50 } } }));
        const names = await boardNames(ctx.api);
        ctx.result(page, () => {
          if (page.operations.length === 0) {
            say(`Health check ${n} has not run yet.`);
            return;
          }
          say(
            table(
              ['OPERATION', 'BOARD', 'STATUS', 'FINISHED', 'ERROR'],
              page.operations.map((o) => [o.id, (o.board_id && names.get(o.board_id)) ?? o.board_id, o.status, when(o.finished_at), o.error ? `${o.error.code}: ${o.error.message}` : null]),
            ),
          );
        });
      }),
    );
}
