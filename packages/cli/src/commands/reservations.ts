import type { Labels, Reservation } from '@mm/api-client';
import type { Command } from 'commander';
import { boardIdOf } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.ts';
import { table, when } from '../format.ts';
import { collectLabel } from './board-fleet.ts';
import { positiveId, withContext } from './shared.ts';

/** `2h`, `90m`, `1h30m`, `45s`, `3600` (seconds) → seconds. */
export function parseDuration(text: string, what: string): number {
  const t = text.trim();
  if (/^\d{1,9}$/.test(t)) return Number(t);
  const m = /^(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,9})s)?$/.exec(t);
  if (!m || t === '') throw new UsageError(`${what} is a duration such as 2h, 90m, 1h30m or 45s (got ${JSON.stringify(text)}).`);
  const [d, h, min, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number];
  const total = d * 86_400 + h * 3600 + min * 60 + s;
  if (total <= 0) throw new UsageError(`${what} must be longer than 0.`);
  return total;
}

const target = (r: Reservation) => r.board_name ?? (r.board_selector ? Object.entries(r.board_selector).map(([k, v]) => `${k}=${v}`).join(',') : '-');

function line(r: Reservation): string {
  if (r.status === 'active') return `Reservation ${r.id}: ${r.board_name ?? r.board_id} is yours until ${when(r.ends_at)}.`;
  if (r.status === 'waiting') {
    const eta = r.estimated_start_at ? `, expected by ${when(r.estimated_start_at)}` : '';
    return `Reservation ${r.id}: waiting for ${target(r)}, position ${r.position ?? '?'}${eta}.`;
  }
  return `Reservation ${r.id}: ended (${r.end_reason ?? 'ended'}).`;
}

function lsTable(rows: Reservation[]): string {
  return table(
    ['ID', 'BOARD', 'USER', 'STATUS', 'UNTIL', 'POSITION', 'NOTE'],
    rows.map((r) => [r.id, target(r), r.user, r.status, r.status === 'active' ? when(r.ends_at) : r.status === 'waiting' ? when(r.estimated_start_at) : when(r.ended_at), r.position, r.note]),
  );
}

/** Polls a waiting request until it is active (or ends); Ctrl-C withdraws it. */
async function waitForTurn(ctx: CommandContext, r: Reservation): Promise<Reservation> {
  let shown = '';
  for (;;) {
    const note = line(r);
    if (note !== shown) ctx.progress.note(note);
    shown = note;
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, 2000);
        ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(new InterruptedError())), { once: true });
      });
    } catch (err) {
      // Interrupted while waiting: the request is withdrawn, so no board is taken for nobody.
      await ctx.api.call(ctx.api.client.DELETE('/api/reservations/{id}/', { params: { path: { id: r.id } } })).catch(() => {});
      ctx.progress.note(`Reservation ${r.id} withdrawn.`);
      throw err;
    }
    r = await ctx.api.call(ctx.api.client.GET('/api/reservations/{id}/', { params: { path: { id: r.id } } }));
    if (r.status !== 'waiting') return r;
  }
}

/** `mm reserve`, `mm release`, `mm reservations ls|renew` (docs/reservations.md). */
export function registerReservations(program: Command): void {
  program
    .command('reserve')
    .description('reserve a board (by name or id, or any idle board matching --label) for a while')
    .argument('[board]', 'the board: its name or id')
    .option('--label <key=value>', 'any idle board with this label (repeatable)', collectLabel, {} as Labels)
    .option('--for <duration>', 'how long: 2h, 90m, 1h30m, 45s', '1h')
    .option('--note <text>', 'what it is for (shown to others)')
    .option('--no-wait', 'when the board is not free, queue the request and return at once')
    .option('--wait-for <duration>', 'how long the request may wait in the queue', '1h')
    .action(
      withContext(async (ctx, opts: { label: Labels; for: string; note?: string; wait: boolean; waitFor: string }, given: string | undefined) => {
        const hasLabels = Object.keys(opts.label).length > 0;
        if ((given === undefined) === !hasLabels) throw new UsageError('Name a board, or give --label key=value (not both).', 'mm reserve kv260-3 --for 2h   or   mm reserve --label site=lab-1 --for 2h');
        const body = {
          ...(given !== undefined ? { board_id: (await boardIdOf(ctx.api, given))! } : { board_selector: opts.label }),
          duration_s: parseDuration(opts.for, '--for'),
          wait_s: parseDuration(opts.waitFor, '--wait-for'),
          ...(opts.note !== undefined ? { note: opts.note } : {}),
        };
        let r = await ctx.api.call(ctx.api.client.POST('/api/reservations/', { body, signal: ctx.signal }));
        if (r.status === 'waiting' && opts.wait) r = await waitForTurn(ctx, r);
        ctx.result(r, () => say(line(r)));
        if (r.status === 'ended') throw new CliError(EXIT.failed, `Reservation ${r.id} ended before it got a board (${r.end_reason}).`);
      }),
    );

  program
    .command('release')
    .description('end a reservation (by id), or every one of yours')
    .argument('[id]', 'the reservation id (default: all yours, active or waiting)')
    .action(
      withContext(async (ctx, _opts: object, given: string | undefined) => {
        const ids: number[] = [];
        if (given !== undefined) ids.push(positiveId(given, 'reservation id'));
        else {
          for (const status of ['active', 'waiting'] as const) {
            const page = await ctx.api.call(ctx.api.client.GET('/api/reservations/', { params: { query: { mine: '1', status, limit: 1000 } } }));
            ids.push(...page.reservations.map((r) => r.id));
          }
          if (ids.length === 0) throw new CliError(EXIT.failed, 'You hold no reservation.', 'See them all: mm reservations ls');
        }
        for (const id of ids) await ctx.api.call(ctx.api.client.DELETE('/api/reservations/{id}/', { params: { path: { id } } }));
        ctx.result({ released: ids }, () => {
          for (const id of ids) say(`Released reservation ${id}.`);
        });
      }),
    );

  const reservations = program.command('reservations').description('board reservations: who holds which board, and the queue');
  reservations
    .command('ls')
    .description('reservations in force and waiting (newest first)')
    .option('--all', 'ended ones too')
    .option('--mine', 'only yours')
    .option('--board <board>', 'only this board (name or id)')
    .action(
      withContext(async (ctx, opts: { all?: boolean; mine?: boolean; board?: string }) => {
        const boardId = await boardIdOf(ctx.api, opts.board);
        const base = { limit: 1000, ...(opts.mine ? { mine: '1' as const } : {}), ...(boardId ? { board_id: boardId } : {}) };
        const rows: Reservation[] = [];
        if (opts.all) rows.push(...(await ctx.api.call(ctx.api.client.GET('/api/reservations/', { params: { query: base } }))).reservations);
        else
          for (const status of ['active', 'waiting'] as const) {
            rows.push(...(await ctx.api.call(ctx.api.client.GET('/api/reservations/', { params: { query: { ...base, status } } }))).reservations);
          }
        ctx.result({ reservations: rows }, () => say(rows.length ? lsTable(rows) : 'No reservations.'));
      }),
    );
  reservations
    .command('renew')
    .description('make a reservation of yours end --for from now')
    .argument('<id>', 'the reservation id')
    .option('--for <duration>', 'how long from now: 2h, 90m', '1h')
    .action(
      withContext(async (ctx, opts: { for: string }, id: string) => {
        const r = await ctx.api.call(
          ctx.api.client.POST('/api/reservations/{id}/renew/', { params: { path: { id: positiveId(id, 'reservation id') } }, body: { duration_s: parseDuration(opts.for, '--for') } }),
        );
        ctx.result(r, () => say(line(r)));
      }),
    );
}
