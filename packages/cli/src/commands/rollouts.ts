import type { Labels } from '@mm/api-client';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { boardIdOf } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { ApiProblemError, CliError, EXIT, UsageError } from '../errors.ts';
import { HashCache } from '../hash-cache.ts';
import { tusUpload } from '../tus-upload.ts';
import { table, when } from '../format.ts';
import { followRollout, rolloutSummary, rolloutTable, type Rollout } from '../rollout-follow.ts';
import { collectLabel } from './board-fleet.ts';
import { positiveId, withContext } from './shared.ts';

const KINDS = ['execute', 'pac_install', 'pac_activate', 'script_deploy', 'agent_update', 'app_install', 'app_load'] as const;
type Kind = (typeof KINDS)[number];

interface CreateOptions {
  label: Labels;
  invocation?: string;
  pac?: string;
  app?: string;
  archiveSha256?: string;
  archive?: string;
  script?: string;
  version?: string;
  batchSize?: string;
  interval?: string;
  abortPercent?: string;
  abortMin?: string;
  follow?: boolean;
  includeMaintenance?: boolean;
  includeBad?: boolean;
}

const whole = (v: string | undefined, what: string, min = 0): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d{1,9}$/.test(v) || Number(v) < min) throw new UsageError(`${what} must be a whole number${min > 0 ? ` of at least ${min}` : ''}.`);
  return Number(v);
};

/** Prints the rollout (or its JSON); exit 1 when it did not succeed and `strict`. */
function show(ctx: CommandContext, r: Rollout, strict = false): void {
  ctx.result(r, () => {
    say(rolloutSummary(r));
    say(rolloutTable(r));
  });
  if (strict && r.status !== 'succeeded') throw new CliError(EXIT.failed, `Rollout ${r.id} ended ${r.status}.`, `See it: mm rollouts show ${r.id}`, { rollout_id: r.id });
}

/**
 * `pac_install --archive FILE`: hashes the file and creates the rollout naming it by sha256;
 * only when the server lacks those bytes (404 `content_not_found`) is the file uploaded,
 * resumably and on its own (an interrupted upload continues when the command runs again).
 */
async function createWithArchive(ctx: CommandContext, opts: CreateOptions & { archive: string }, kind: 'pac_install' | 'app_install' = 'pac_install'): Promise<Rollout> {
  const st = await fs.stat(opts.archive).catch(() => undefined);
  if (!st?.isFile()) throw new UsageError(`Cannot read the archive ${opts.archive}: it is not a regular file.`);
  const hashing = ctx.progress.bar('hashing archive', st.size);
  const hashed = await new HashCache().hash(opts.archive, (n) => hashing.add(n), ctx.signal);
  hashing.done(hashed.cached ? 'cached' : undefined);
  const filename = path.basename(opts.archive);
  const withArchive = { ...opts, archiveSha256: hashed.sha256, archiveName: filename };
  try {
    return await create(ctx, kind, withArchive);
  } catch (err) {
    if (!(err instanceof ApiProblemError && err.code === 'content_not_found')) throw err;
  }
  const bar = ctx.progress.bar('uploading archive', hashed.size);
  await tusUpload({ api: ctx.api, file: hashed, invocationId: undefined, kind: 'archive', filename, bar, signal: ctx.signal, note: (l) => ctx.progress.note(l) });
  bar.done();
  return create(ctx, kind, withArchive);
}

async function create(ctx: CommandContext, kind: Kind, opts: CreateOptions & { archiveName?: string }): Promise<Rollout> {
  const params: Record<string, unknown> = {};
  if (opts.pac !== undefined) params.pac = opts.pac;
  if (opts.app !== undefined) params.app = opts.app;
  if (opts.archiveSha256 !== undefined) params.archive_sha256 = opts.archiveSha256;
  if (opts.archiveName !== undefined) params.filename = opts.archiveName;
  if (opts.script !== undefined) params.script_id = opts.script;
  if (opts.version !== undefined) params.version = opts.version;
  const batchSize = whole(opts.batchSize, '--batch-size', 1);
  const interval = whole(opts.interval, '--interval');
  if ((opts.abortPercent === undefined) !== (opts.abortMin === undefined)) throw new UsageError('--abort-percent and --abort-min go together.');
  const abortPercent = whole(opts.abortPercent, '--abort-percent');
  const abortMin = whole(opts.abortMin, '--abort-min', 1);
  return ctx.api.call(
    ctx.api.client.POST('/api/rollouts/', {
      body: {
        kind,
        board_selector: opts.label,
        ...(opts.invocation !== undefined ? { invocation_id: positiveId(opts.invocation, 'invocation id') } : {}),
        ...(Object.keys(params).length > 0 ? { params } : {}),
        ...(batchSize !== undefined ? { batch_size: batchSize } : {}),
        ...(interval !== undefined ? { batch_interval_s: interval } : {}),
        ...(abortPercent !== undefined && abortMin !== undefined ? { abort: { failure_percent: abortPercent, min_finished: abortMin } } : {}),
        ...(opts.includeMaintenance ? { include_maintenance: true } : {}),
        ...(opts.includeBad ? { include_bad: true } : {}),
      },
      signal: ctx.signal,
    }),
  );
}

/** `mm rollouts …` and `mm agent update` (docs/rollouts.md). */
export function registerRollouts(program: Command): void {
  const rollouts = program.command('rollouts').description('one change or one run across many boards, in phases');
  rollouts
    .command('ls')
    .description('list rollouts, newest first')
    .option('--status <status>', 'running, paused, succeeded, failed, aborted or cancelled')
    .option('--kind <kind>', KINDS.join(', '))
    .action(
      withContext(async (ctx, opts: { status?: string; kind?: string }) => {
        const page = await ctx.api.call(
          ctx.api.client.GET('/api/rollouts/', { params: { query: { ...(opts.status ? { status: opts.status as Rollout['status'] } : {}), ...(opts.kind ? { kind: opts.kind } : {}) } } }),
        );
        ctx.result(page, () => {
          if (page.rollouts.length === 0) {
            say('No rollouts.');
            return;
          }
          say(
            table(
              ['ID', 'KIND', 'STATUS', 'BOARDS', 'OK', 'FAILED', 'CREATED'],
              page.rollouts.map((r) => [r.id, r.kind, r.status, r.boards.length, r.counts.succeeded, r.counts.failed, when(r.created_at)]),
            ),
          );
        });
      }),
    );
  rollouts
    .command('show <id>')
    .description('a rollout: its status and every board (status, time, metrics)')
    .action(withContext(async (ctx, _opts, id: string) => show(ctx, await ctx.api.call(ctx.api.client.GET('/api/rollouts/{id}/', { params: { path: { id: positiveId(id, 'rollout id') } } })))));
  rollouts
    .command('create <kind>')
    .description(`start a rollout (${KINDS.join(', ')}) on every board the labels match`)
    .option('--label <k=v>', 'boards whose labels hold this pair (repeatable; none: every board)', collectLabel, {})
    .option('--invocation <id>', 'execute: the invocation to run')
    .option('--pac <name>', 'pac_activate: the PAC')
    .option('--app <name>', 'app_load: the accelerated application')
    .option('--archive <file>', 'pac_install, app_install: the archive (PAC: .tar or .tar.gz; app: .tar, .tar.gz or .zip); uploaded only when the server lacks it')
    .option('--archive-sha256 <sha256>', 'pac_install, app_install: an archive the server already holds')
    .option('--script <id>', 'script_deploy: the device script')
    .option('--version <version>', 'agent_update: the version (default: the newest served)')
    .option('--batch-size <n>', 'boards per phase (default: all at once)')
    .option('--interval <s>', 'seconds between phases')
    .option('--abort-percent <p>', 'abort once this share of finished boards failed…')
    .option('--abort-min <n>', '…and at least this many have finished')
    .option('--include-maintenance', 'also boards in maintenance (left out by default)')
    .option('--include-bad', 'also boards whose health is bad (left out by default)')
    .option('--follow', 'follow it to the end')
    .action(
      withContext(async (ctx, opts: CreateOptions, kind: string) => {
        if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`The kind is one of ${KINDS.join(', ')} (got ${JSON.stringify(kind)}).`);
        if (opts.archive !== undefined && kind !== 'pac_install' && kind !== 'app_install') throw new UsageError('--archive is for pac_install and app_install rollouts.');
        if (opts.archive !== undefined && opts.archiveSha256 !== undefined) throw new UsageError('Give --archive or --archive-sha256, not both.');
        const r = opts.archive !== undefined ? await createWithArchive(ctx, { ...opts, archive: opts.archive }, kind as 'pac_install' | 'app_install') : await create(ctx, kind as Kind, opts);
        if (!opts.follow) return show(ctx, r);
        ctx.progress.note(`rollout ${r.id} started on ${r.boards.length} board${r.boards.length === 1 ? '' : 's'}`);
        show(ctx, await followRollout(ctx, r.id), true);
      }),
    );
  for (const [name, what] of [
    ['pause', 'hold the next phase'],
    ['resume', 'let a paused rollout go on'],
    ['cancel', 'skip the boards not started and cancel queued steps'],
  ] as const) {
    rollouts
      .command(`${name} <id>`)
      .description(what)
      .action(
        withContext(async (ctx, _opts, id: string) => {
          const path = `/api/rollouts/{id}/${name}/` as const;
          show(ctx, await ctx.api.call(ctx.api.client.POST(path, { params: { path: { id: positiveId(id, 'rollout id') } } })));
        }),
      );
  }

  const agent = program.command('agent').description("the boards' agent");
  agent
    .command('update [board]')
    .description('update one board\'s agent, or (--label) every matching board\'s as a rollout')
    .option('--label <k=v>', 'boards whose labels hold this pair (repeatable)', collectLabel, {})
    .option('--version <version>', 'default: the newest the control plane serves')
    .option('--batch-size <n>', 'with --label: boards per phase')
    .option('--abort-percent <p>', 'with --label: abort once this share of finished boards failed…')
    .option('--abort-min <n>', '…and at least this many have finished')
    .action(
      withContext(async (ctx, opts: CreateOptions, board: string | undefined) => {
        const byLabel = Object.keys(opts.label).length > 0;
        if ((board === undefined) === !byLabel) throw new UsageError('Name one board, or select boards with --label k=v (not both).');
        if (board !== undefined) {
          const id = (await boardIdOf(ctx.api, board))!;
          const op = await ctx.api.call(
            ctx.api.client.POST('/api/boards/{id}/agent-update/', {
              params: { path: { id } },
              body: opts.version !== undefined ? { version: opts.version } : {},
              signal: ctx.signal,
            }),
          );
          ctx.result(op, () => say(`Agent of ${board} updated (operation ${op.id}, ${op.status}).`));
          return;
        }
        const r = await create(ctx, 'agent_update', opts);
        ctx.progress.note(`rollout ${r.id} started on ${r.boards.length} board${r.boards.length === 1 ? '' : 's'}`);
        show(ctx, await followRollout(ctx, r.id), true);
      }),
    );
}
