import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Operation } from '../api.ts';
import { boardIdOf } from '../board-choice.ts';
import type { CommandContext } from '../context.ts';
import type { paths } from '@mm/api-client';
import { say } from '../context.ts';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.ts';
import { followOperation } from '../follow.ts';
import { table, when } from '../format.ts';
import { metricLines } from '../metrics-format.ts';
import { collectLabel, registerBoardFleetCommands } from './board-fleet.ts';
import { formatLabels, type Labels } from '@mm/api-client';
import { boardNames, lateResultLine, offlineLine, waitingLine } from '../fleet-view.ts';
import { archiveForm } from './archive-form.ts';
import { positiveId, withContext } from './shared.ts';

const OP_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

export function registerBoards(program: Command): void {
  const boards = program.command('boards').description('list, register, show, label and remove boards');
  boards
    .command('ls')
    .description('list boards: status, health, maintenance, labels')
    .option('--label <k=v>', 'only boards with this label (repeatable: all must match)', collectLabel, {})
    .action(
      withContext(async (ctx, opts: { label: Labels }) => {
        const label = Object.entries(opts.label).map(([k, v]) => `${k}=${v}`);
        const page = await ctx.api.call(ctx.api.client.GET('/api/boards/', { params: { query: { limit: 1000, ...(label.length ? { label } : {}) } } }));
        ctx.result(page, () => {
          if (page.boards.length === 0) {
            say(label.length ? `No board has the labels ${formatLabels(opts.label)}.` : 'No boards registered.');
            return;
          }
          say(boardsTable(page.boards as ListedBoard[]));
        });
      }),
    );
  boards
    .command('add <name>')
    .description("register a board; prints its token (shown this once) and the agent's install command")
    .action(
      withContext(async (ctx, _opts, name: string) => {
        const board = await ctx.api.call(ctx.api.client.POST('/api/boards/', { body: { name } }));
        // The server's one line (it serves install-agent.sh and the packages); older servers have none.
        const install = board.install_command ?? `sudo deploy/agent/install.sh --server-url ${ctx.settings.server} --token ${board.token}`;
        ctx.result({ ...board, install_command: install }, () => {
          say(`Board ${board.id} (${board.name}) registered.`);
          say(`Token (shown this once): ${board.token}`);
          say(board.install_command ? 'Install the agent on the board:' : 'Install the agent on the board (from a checkout of this repository):');
          say(`  ${install}`);
          if (board.install_warning) say(`Warning: ${board.install_warning}`);
        });
      }),
    );
  boards
    .command('rm <board>')
    .description('remove a board (its token stops working); by name or id')
    .action(
      withContext(async (ctx, _opts, given: string) => {
        const id = (await boardIdOf(ctx.api, given))!;
        await ctx.api.call(ctx.api.client.DELETE('/api/boards/{id}/', { params: { path: { id } } }));
        ctx.result({ deleted: id }, () => say(`Removed board ${id}.`));
      }),
    );
  registerBoardFleetCommands(boards);
}

export function registerOps(program: Command): void {
  const ops = program.command('ops').description('operations: list, show, logs, cancel');
  ops
    .command('ls')
    .description('list operations, newest first')
    .option('--board <board>', "only this board (its name or id)")
    .option('--status <s>', `only this status (${OP_STATUSES.join(', ')})`)
    .option('--invocation <id>', 'only this invocation')
    .action(
      withContext(async (ctx, opts: { board?: string; status?: string; invocation?: string }) => {
        if (opts.status && !OP_STATUSES.includes(opts.status)) throw new UsageError(`--status must be one of ${OP_STATUSES.join(', ')}.`);
        const page = await ctx.api.call(
          ctx.api.client.GET('/api/operations/', {
            params: { query: { board_id: await boardIdOf(ctx.api, opts.board), status: opts.status as OperationStatus | undefined, invocation_id: opts.invocation ? positiveId(opts.invocation, 'invocation id') : undefined } },
          }),
        );
        const names = page.operations.some((o) => o.board_id) ? await boardNames(ctx.api) : new Map<string, string>();
        const boardOf = (o: Operation) =>
          o.board_id ? (names.get(o.board_id) ?? o.board_id.slice(0, 8)) : o.board_selector ? `any ${formatLabels(o.board_selector)}` : undefined;
        ctx.result(page, () =>
          say(table(['ID', 'KIND', 'STATUS', 'INVOCATION', 'BOARD', 'CREATED'], page.operations.map((o) => [o.id, o.kind, o.status, o.invocation_id, boardOf(o), when(o.created_at)]))),
        );
      }),
    );
  ops
    .command('show <id>')
    .description('one operation')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const op = await ctx.api.call(ctx.api.client.GET('/api/operations/{id}/', { params: { path: { id: positiveId(id, 'operation id') } } }));
        const boardName = op.board_id ? (await boardNames(ctx.api)).get(op.board_id) : undefined;
        ctx.result(op, () => {
          const board = op.board_id ? `, board ${boardName ? `${boardName} (${op.board_id})` : op.board_id}` : op.board_selector ? `, any board with ${formatLabels(op.board_selector)}` : '';
          say(`Operation ${op.id}: ${op.kind}, ${op.status}${op.invocation_id ? `, invocation ${op.invocation_id}` : ''}${board}`);
          say(`created ${when(op.created_at)}, started ${when(op.started_at)}, finished ${when(op.finished_at)}`);
          say(`progress: ${op.progress.phase} ${op.progress.bytes_done}/${op.progress.bytes_total}`);
          for (const line of [waitingLine(op), offlineLine(op)]) if (line) say(line);
          if (op.error) say(`error: ${op.error.code}: ${op.error.message}`);
          const late = lateResultLine(op);
          if (late) say(late);
          const metrics = metricLines((op.result as { metrics?: unknown } | null)?.metrics);
          if (metrics.length) say(['metrics:', ...metrics].join('\n'));
        });
      }),
    );
  ops
    .command('logs <id>')
    .description("the operation's log; -f follows it live until it ends")
    .option('-f, --follow', 'follow the live log until the operation ends')
    .action(
      withContext(async (ctx, opts: { follow?: boolean }, id: string) => {
        const n = positiveId(id, 'operation id');
        if (!opts.follow) {
          const text = (await ctx.api.call(ctx.api.client.GET('/api/operations/{id}/log/', { params: { path: { id: n } }, parseAs: 'text' }))) as string;
          ctx.result({ operation_id: n, log: text }, () => process.stdout.write(text));
          return;
        }
        let log = '';
        let final: Operation;
        try {
          final = await followOperation(
            ctx.api,
            n,
            {
              log: (_s, data) => {
                if (ctx.settings.json) log += data;
                else process.stdout.write(data);
              },
            },
            ctx.signal,
          );
        } catch (err) {
          if (err instanceof InterruptedError) throw new InterruptedError(`Stopped following operation ${n}; it keeps running.`, `Follow it again with: mm ops logs ${n} -f`);
          throw err;
        }
        ctx.result({ operation: final, log }, () => process.stderr.write(`operation ${n} ${final.status}\n`));
        if (final.status !== 'succeeded') {
          throw new CliError(EXIT.failed, `Operation ${n} ${final.status}${final.error ? ` (${final.error.code}: ${final.error.message})` : ''}.`, undefined, { operation: final });
        }
      }),
    );
  ops
    .command('cancel <id>')
    .description('cancel a queued or running operation')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const op = await ctx.api.call(ctx.api.client.POST('/api/operations/{id}/cancel/', { params: { path: { id: positiveId(id, 'operation id') } } }));
        ctx.result(op, () => say(`Cancelling operation ${op.id} (${op.status}).`));
      }),
    );
}

type OperationStatus = Operation['status'];
type PacInstallForm = paths['/api/pacs/install/']['post']['requestBody']['content']['multipart/form-data'];

/**
 * The answer of a call that waits for its operation, which comes back 202 with the
 * operation instead when it runs longer than the server waits (MM_SYNC_WAIT_S): followed
 * to its end, whose result is the answer.
 */
async function settled<T extends object>(ctx: CommandContext, answer: T | Operation): Promise<T> {
  if (!('kind' in answer && 'status' in answer && 'progress' in answer)) return answer;
  const final = await followOperation(ctx.api, answer.id, {}, ctx.signal);
  if (final.status !== 'succeeded') {
    throw new CliError(EXIT.failed, `Operation ${final.id} ${final.status}${final.error ? ` (${final.error.code}: ${final.error.message})` : ''}.`, `See: mm ops logs ${final.id}`, { operation: final });
  }
  return final.result as T;
}

export function registerPac(program: Command): void {
  const pac = program.command('pac').description("the board's PACs: list, activate (reboots the board), install");
  pac
    .command('ls')
    .description("list the board's PACs")
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }) => {
        const answer = await settled(ctx, await ctx.api.call(ctx.api.client.POST('/api/pacs/query/', { body: { board_id: await boardIdOf(ctx.api, opts.board) } })));
        ctx.result(answer, () => say(table(['NAME', 'ACTIVE', 'BOARD', 'ASSETS'], answer.pacs.map((p) => [p.name, p.active ? 'yes' : '', p.board, p.assets_dir]))));
      }),
    );
  pac
    .command('activate <name>')
    .description('activate a PAC and reboot the board into it; waits until it is back with the PAC active')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }, name: string) => {
        // The server refuses a PAC the board does not list (400 pac_not_found) before anything
        // runs: the reboot is announced only once it accepted.
        const op = (await ctx.api.call(
          ctx.api.client.POST('/api/pacs/activate/', {
            body: { pac: name, board_id: await boardIdOf(ctx.api, opts.board) },
            params: { header: { prefer: 'respond-async' } },
          }),
        )) as Operation;
        ctx.progress.note(`activating ${name} (operation ${op.id}); the board reboots into it`);
        const final = await followOperation(ctx.api, op.id, { log: (_s, d) => ctx.progress.note(d.trimEnd()) }, ctx.signal).catch((err: unknown) => {
          if (err instanceof InterruptedError) throw new InterruptedError(`Stopped following operation ${op.id}; it keeps going.`, `Follow it again with: mm ops logs ${op.id} -f`);
          throw err;
        });
        if (final.status !== 'succeeded') {
          throw new CliError(EXIT.failed, `Activating ${name} ${final.status}${final.error ? ` (${final.error.code}: ${final.error.message})` : ''}.`, `See: mm ops logs ${op.id}`, { operation: final });
        }
        ctx.result(final, () => say(`${name} is active (operation ${op.id}).`));
      }),
    );
  pac
    .command('install <archive>')
    .description('install a PAC from a .tar or .tar.gz of one PAC folder')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }, archive: string) => {
        const { form, name, size } = await archiveForm(ctx.api, archive, opts.board);
        ctx.progress.note(`installing ${name} (${size} bytes)`);
        // openapi-fetch sends a FormData body as it is (multipart with its boundary).
        const answer = await settled(ctx, await ctx.api.call(ctx.api.client.POST('/api/pacs/install/', { body: form as unknown as PacInstallForm })));
        ctx.result(answer, () => say(`Installed ${answer.pac} on board ${answer.board_id}.`));
      }),
    );
}

type ListedBoard = {
  id: string;
  name: string;
  status: string;
  busy?: boolean;
  labels?: Labels;
  health?: string;
  maintenance?: boolean;
  failed_scripts?: string[];
  reservation?: { user: string; ends_at: string } | null;
  last_seen_at: string | null;
};

/** `mm boards ls`: one row a board, with its people's labels (the agent's `mm/` ones are in `mm boards show`). */
export function boardsTable(boards: ListedBoard[]): string {
  const withReservations = boards.some((b) => b.reservation !== undefined);
  const withScripts = boards.some((b) => (b.failed_scripts ?? []).length > 0);
  const headers = ['NAME', 'STATUS', 'HEALTH', 'MAINT', ...(withReservations ? ['RESERVED'] : []), ...(withScripts ? ['FAILED SCRIPTS'] : []), 'LABELS', 'LAST SEEN', 'ID'];
  const rows = boards.map((b) => {
    const people = Object.fromEntries(Object.entries(b.labels ?? {}).filter(([k]) => !k.startsWith('mm/')));
    const status = b.status === 'online' && b.busy ? 'online, busy' : b.status;
    return [
      b.name,
      status,
      b.health ?? '-',
      b.maintenance ? 'yes' : 'no',
      ...(withReservations ? [b.reservation ? `${b.reservation.user} until ${when(b.reservation.ends_at)}` : '-'] : []),
      ...(withScripts ? [(b.failed_scripts ?? []).join(', ') || '-'] : []),
      formatLabels(people, ',') || '-',
      when(b.last_seen_at),
      b.id,
    ];
  });
  return table(headers, rows);
}
