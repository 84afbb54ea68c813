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
async function patchBoard(ctx: CommandContext, id: string, body: { labels?: Labels; maintenance?: boolean }): Promise<FleetBoard> {
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
  if (b.health !== undefined) {
    lines.push(`  health       ${b.health}${b.health_reason ? `: ${b.health_reason}` : ''}${b.health_checked_at ? ` (checked ${when(b.health_checked_at)})` : ''}`);
  }
  if (b.maintenance !== undefined) lines.push(`  maintenance  ${b.maintenance ? 'on: takes no selector work' : 'off'}`);
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
    .command('label <board> [pairs...]')
    .description('set labels (key=value) and remove them (--remove key); mm/ labels are the agent\'s and cannot be set')
    .option('--remove <key>', 'remove this label (repeatable)', collectKey, [])
    .action(
      withContext(async (ctx, opts: { remove: string[] }, given: string, pairs: string[] = []) => {
        if (pairs.length === 0 && opts.remove.length === 0) throw new UsageError('Give labels to set (key=value) or --remove key.', 'e.g. mm boards label kv260-1 camera=yes --remove site');
        const set = pairs.reduce<Labels>((acc, p) => collectLabel(p, acc), {});
        const reserved = [...Object.keys(set), ...opts.remove].filter((k) => k.startsWith(AGENT_PREFIX));
        if (reserved.length) throw new UsageError(`${reserved.join(', ')}: labels under ${AGENT_PREFIX} are the agent's own and read-only.`);
        const board = await getBoard(ctx.api, given);
        const labels: Labels = Object.fromEntries(Object.entries(board.labels).filter(([k]) => !k.startsWith(AGENT_PREFIX)));
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
}
