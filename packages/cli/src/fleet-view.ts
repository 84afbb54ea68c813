import { createInterface } from 'node:readline/promises';
import { formatLabels, nearestLabel, type Labels } from '@mm/api-client';
import type { Api, Operation } from './api.ts';
import { CliError, EXIT } from './errors.ts';
import { when } from './format.ts';

/**
 * What the CLI says about the fleet around an operation (docs/fleet.md): board names for
 * ids, why queued work waits, a board offline mid-run, and a selector checked before
 * anything is created.
 */

interface BoardLite {
  id: string;
  name: string;
  labels?: Labels;
}

/** Every registered board (id, name, labels), a page of 1000 at a time. */
export async function allBoards(api: Api, signal?: AbortSignal): Promise<BoardLite[]> {
  const out: BoardLite[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await api.call(api.client.GET('/api/boards/', { params: { query: { limit: 1000, offset } }, ...(signal ? { signal } : {}) }));
    out.push(...(page.boards as BoardLite[]));
    if (page.boards.length < 1000 || out.length >= page.total) return out;
  }
}

/** Board id → name. */
export async function boardNames(api: Api): Promise<Map<string, string>> {
  return new Map((await allBoards(api)).map((b) => [b.id, b.name]));
}

type OperationView = Operation & {
  waiting?: { reason: string; gives_up_at: string | null } | null;
  board_offline_since?: string | null;
};

/** "waiting: 3 boards match: 1 offline, 2 in maintenance. Gives up at …" for queued selector work; undefined otherwise. */
export function waitingLine(op: Operation): string | undefined {
  const w = (op as OperationView).waiting;
  if (!w) return undefined;
  return `waiting for a board: ${w.reason}${w.gives_up_at ? ` Gives up at ${when(w.gives_up_at)}.` : ''}`;
}

/** "board offline since …" for running work whose board is gone; undefined otherwise. */
export function offlineLine(op: Operation): string | undefined {
  const since = (op as OperationView).board_offline_since;
  return since ? `board offline since ${when(since)} (the operation fails board_lost if it does not come back)` : undefined;
}

/** What the board reported after the operation failed board_lost, if it did. */
export function lateResultLine(op: Operation): string | undefined {
  const late = (op.result as { late_result?: { status: string; reported_at: string } } | null)?.late_result;
  return late ? `note: the board reported "${late.status}" later (${when(late.reported_at)}); the status stays ${op.status}` : undefined;
}

/**
 * `--label` checked before anything is created or sent: no registered board matches → exit 3
 * with the nearest label some board holds.
 */
export async function checkSelector(api: Api, selector: Labels, signal?: AbortSignal): Promise<void> {
  const label = Object.entries(selector).map(([k, v]) => `${k}=${v}`);
  const matching = await api.call(api.client.GET('/api/boards/', { params: { query: { label, limit: 1 } }, ...(signal ? { signal } : {}) }));
  if (matching.total > 0) return;
  const suggestion = nearestLabel(selector, (await allBoards(api, signal)).map((b) => b.labels ?? {}));
  throw new CliError(
    EXIT.unreachable,
    `No registered board has the labels ${formatLabels(selector)}.`,
    suggestion ? `Did you mean ${suggestion}? (see the labels with \`mm boards ls\`)` : 'See the boards and their labels with `mm boards ls`.',
    { problem: { code: 'no_matching_board', ...(suggestion ? { suggestion } : {}) } },
  );
}

/** Asks a yes/no question on the terminal (no: an empty answer, Ctrl-C, or no terminal). */
export async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.on('SIGINT', () => resolve(''));
      rl.on('close', () => resolve(''));
      rl.question(question).then(resolve, () => resolve(''));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
