import type { Command } from 'commander';
import { formatLabels, parseLabelPair, type Labels } from '@mm/api-client';
import type { Api, Board } from '../api.ts';
import { boardIdOf } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { UsageError } from '../errors.ts';
import { bytes, when } from '../format.ts';
import { withContext } from './shared.ts';

/** The agent's read-only labels. */
const AGENT_PREFIX = 'mm/';

/**
 * The board as the fleet part of the API shows it (docs/api.md, "Boards"): health,
 * maintenance, queue and telemetry come with the scheduler and telemetry; a server without
 * them leaves them out, and so does `mm boards show`.
 */
type FleetBoard = Board & {
  facts?: Record<string, unknown> | null;
  health?: 'unknown' | 'good' | 'bad';
  health_reason?: string | null;
  health_checked_at?: string | null;
  maintenance?: boolean;
  current_operation_id?: number | null;
  queued?: number;
  telemetry?: Telemetry | null;
  power?: { controller_board_id: string; pdu_hostname: string; pdu_port: number } | null;
};

interface Telemetry {
  at?: string;
  temperatures_c?: Record<string, number>;
  power_w?: number;
  memory_used_bytes?: number;
  load_1m?: number;
  disk_free_bytes?: number;
}

/** `--label k=v` (and `k=v` arguments): repeatable, later wins. */
export function collectLabel(value: string, labels: Labels = {}): Labels {
  const pair = parseLabelPair(value);
  if (!pair) throw new UsageError(`A label is key=value (got ${JSON.stringify(value)}).`);
  return { ...labels, [pair[0]]: pair[1] };
}

function collectKey(value: string, keys: string[] = []): string[] {
  return [...keys, value];
}

async function getBoard(api: Api, given: string): Promise<FleetBoard> {
  const id = (await boardIdOf(api, given))!;
  return (await api.call(api.client.GET('/api/boards/{id}/', { params: { path: { id } } }))) as FleetBoard;
}

/** `PATCH /api/boards/<id>/`: labels replace the people's ones (the agent's `mm/` labels stay). */
/** The labels people set (the agent's `mm/` ones left out). */
const userLabels = (labels: Labels): Labels => Object.fromEntries(Object.entries(labels).filter(([k]) => !k.startsWith(AGENT_PREFIX)));

async function patchBoard(ctx: CommandContext, id: string, body: { labels?: Labels; maintenance?: boolean; name?: string }): Promise<FleetBoard> {
  return (await ctx.api.call(ctx.api.client.PATCH('/api/boards/{id}/', { params: { path: { id } }, body, signal: ctx.signal }))) as FleetBoard;
}

/** What a fact's value reads as (sizes in bytes as KiB/MiB/GiB). */
function factValue(name: string, value: unknown): string {
  if (typeof value === 'number' && name.endsWith('_bytes')) return `${bytes(value)} (${value})`;
  if (value === null) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The facts people look for first, then the rest by name. */
const FACT_ORDER = ['board_model', 'arch', 'os', 'kernel', 'cpu_count', 'memory_bytes', 'disk_free_bytes', 'active_pac', 'agent_version', 'node_version', 'hostname', 'serial'];

export function boardShowLines(b: FleetBoard): string[] {
  const lines = [`Board ${b.name} (${b.id})`];
  lines.push(`  status       ${b.status}${b.busy ? ', busy' : ', idle'}${b.current_operation_id ? ` (operation ${b.current_operation_id})` : ''}${b.queued ? `, ${b.queued} queued` : ''}`);
  lines.push(`  last seen    ${when(b.last_seen_at)}`);
  if (b.power) lines.push(`  power        PDU ${b.power.pdu_hostname} port ${b.power.pdu_port} via lab host ${b.power.controller_board_id}`);
  if (b.health !== undefined) {
    lines.push(`  health       ${b.health}${b.health_reason ? `: ${b.health_reason}` : ''}${b.health_checked_at ? ` (checked ${when(b.health_checked_at)})` : ''}`);
  }
  if (b.maintenance !== undefined) lines.push(`  maintenance  ${b.maintenance ? 'on: takes no selector work' : 'off'}`);
  if (b.reservation !== undefined) lines.push(`  reserved     ${b.reservation ? `by ${b.reservation.user ?? 'anonymous'} until ${when(b.reservation.ends_at)} (reservation ${b.reservation.id})` : 'no'}`);
  const own = Object.fromEntries(Object.entries(b.labels).filter(([k]) => !k.startsWith(AGENT_PREFIX)));
  const agent = Object.fromEntries(Object.entries(b.labels).filter(([k]) => k.startsWith(AGENT_PREFIX)));
  lines.push(`  labels       ${formatLabels(own) || '-'}`);
  lines.push(`  mm/ labels   ${formatLabels(agent) || '-'}`);
  const facts = b.facts ?? {};
  const names = [...FACT_ORDER.filter((k) => k in facts), ...Object.keys(facts).filter((k) => !FACT_ORDER.includes(k)).sort()];
  if (names.length) {
    lines.push('Facts');
    const width = Math.max(...names.map((n) => n.length));
    for (const n of names) lines.push(`  ${n.padEnd(width)}  ${factValue(n, facts[n])}`);
  } else lines.push('Facts        none yet (the agent has not said hello)');
  if (b.telemetry) lines.push(...telemetryLines(b.telemetry));
  return lines;
}

function telemetryLines(t: Telemetry): string[] {
  const lines = [`Telemetry${t.at ? ` (${when(t.at)})` : ''}`];
  for (const [sensor, c] of Object.entries(t.temperatures_c ?? {}).sort(([a], [b]) => a.localeCompare(b))) lines.push(`  ${`temperature ${sensor}`.padEnd(24)}  ${c.toFixed(1)} °C`);
  if (t.power_w !== undefined) lines.push(`  ${'power'.padEnd(24)}  ${t.power_w.toFixed(2)} W`);
  if (t.memory_used_bytes !== undefined) lines.push(`  ${'memory used'.padEnd(24)}  ${bytes(t.memory_used_bytes)}`);
  if (t.load_1m !== undefined) lines.push(`  ${'load (1 min)'.padEnd(24)}  ${t.load_1m.toFixed(2)}`);
  if (t.disk_free_bytes !== undefined) lines.push(`  ${'disk free'.padEnd(24)}  ${bytes(t.disk_free_bytes)}`);
  return lines;
}

/** `mm boards show|label|maintenance` (docs/cli.md, "Fleet commands"). */
export function registerBoardFleetCommands(boards: Command): void {
  boards
    .command('show <board>')
    .description("one board: status, health, maintenance, labels, the agent's facts and its latest telemetry")
    .action(
      withContext(async (ctx, _opts, given: string) => {
        const b = await getBoard(ctx.api, given);
        ctx.result(b, () => say(boardShowLines(b).join('\n')));
      }),
    );
  boards
    .command('label [board] [pairs...]')
    .description(
      "set labels (key=value or --set key=value) and remove them (--remove key) on one board, or on every board --label-selector matches; mm/ labels are the agent's and cannot be set",
    )
    .option('--set <key=value>', 'set this label (repeatable)', collectLabel, {})
    .option('--remove <key>', 'remove this label (repeatable)', collectKey, [])
    .option('--label-selector <key=value>', 'every board holding this label (repeatable: all of them), instead of one board', collectLabel, undefined)
    .action(
      withContext(async (ctx, opts: { set: Labels; remove: string[]; labelSelector?: Labels }, given: string | undefined, pairs: string[] = []) => {
        // With a selector every argument is a label to set; else the first names the board.
        const args = opts.labelSelector ? [...(given === undefined ? [] : [given]), ...pairs] : pairs;
        if (!opts.labelSelector && given === undefined) throw new UsageError('Name a board, or give --label-selector key=value.', 'e.g. mm boards label kv260-1 camera=yes');
        const set = args.reduce<Labels>((acc, p) => collectLabel(p, acc), { ...opts.set });
        if (Object.keys(set).length === 0 && opts.remove.length === 0) {
          throw new UsageError('Give labels to set (key=value) or --remove key.', 'e.g. mm boards label kv260-1 camera=yes --remove site');
        }
        const reserved = [...Object.keys(set), ...opts.remove].filter((k) => k.startsWith(AGENT_PREFIX));
        if (reserved.length) throw new UsageError(`${reserved.join(', ')}: labels under ${AGENT_PREFIX} are the agent's own and read-only.`);
        if (opts.labelSelector) {
          const answer = await ctx.api.call(
            ctx.api.client.POST('/api/boards/labels/', { body: { board_selector: opts.labelSelector, set, remove: opts.remove }, signal: ctx.signal }),
          );
          ctx.result(answer, () => {
            if (answer.changed === 0) say(`No board holds ${formatLabels(opts.labelSelector!)}: nothing changed.`);
            else {
              say(`${answer.changed} ${answer.changed === 1 ? 'board' : 'boards'} changed:`);
              for (const b of answer.boards) say(`  ${b.name}: ${formatLabels(userLabels(b.labels)) || 'no labels'}`);
            }
          });
          return;
        }
        const board = await getBoard(ctx.api, given!);
        const labels: Labels = userLabels(board.labels);
        for (const k of opts.remove) {
          if (!(k in labels)) throw new UsageError(`Board ${board.name} has no label ${JSON.stringify(k)} to remove (it has: ${formatLabels(labels) || 'none'}).`);
          delete labels[k];
        }
        Object.assign(labels, set);
        // PATCH replaces the whole map of people's labels: the board's, changed as asked.
        const updated = await patchBoard(ctx, board.id, { labels });
        ctx.result(updated, () => say(`Board ${updated.name}: ${formatLabels(updated.labels) || 'no labels'}`));
      }),
    );
  boards
    .command('rename <board> <name>')
    .description('give a board a new name (names are unique); by its name or id')
    .action(
      withContext(async (ctx, _opts, given: string, name: string) => {
        const id = (await boardIdOf(ctx.api, given))!;
        const updated = await patchBoard(ctx, id, { name });
        ctx.result(updated, () => say(`Board ${id} is now named ${updated.name}.`));
      }),
    );
  boards
    .command('maintenance <board> <on|off>')
    .description('put a board in maintenance (it takes no selector work) or take it out')
    .action(
      withContext(async (ctx, _opts, given: string, state: string) => {
        if (state !== 'on' && state !== 'off') throw new UsageError(`maintenance takes on or off (got ${JSON.stringify(state)}).`);
        const id = (await boardIdOf(ctx.api, given))!;
        const updated = await patchBoard(ctx, id, { maintenance: state === 'on' });
        ctx.result(updated, () => say(`Board ${updated.name}: maintenance ${updated.maintenance ? 'on' : 'off'}.`));
      }),
    );
  boards
    .command('power <board> <on|off|cycle>')
    .description("switch a board's power through its lab host and pdudaemon (docs/power.md); waits for the operation")
    .action(
      withContext(async (ctx, _opts, given: string, action: string) => {
        if (action !== 'on' && action !== 'off' && action !== 'cycle') throw new UsageError(`power takes on, off or cycle (got ${JSON.stringify(action)}).`);
        const id = (await boardIdOf(ctx.api, given))!;
        const op = (await ctx.api.call(
          ctx.api.client.POST('/api/boards/{id}/power/', { params: { path: { id } }, body: { action }, signal: ctx.signal }),
        )) as { id: number; kind: string; status: string; result?: { pdu_answer?: string } | null };
        ctx.result(op, () =>
          say(`Board ${given}: ${op.kind} ${op.status} (operation ${op.id})${op.result?.pdu_answer ? `; pdudaemon: ${op.result.pdu_answer}` : ''}.`),
        );
      }),
    );
}
