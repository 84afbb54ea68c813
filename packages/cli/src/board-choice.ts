import type { Api, Board } from './api.ts';
import { CliError, EXIT, UsageError } from './errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function allBoards(api: Api): Promise<Board[]> {
  const boards: Board[] = [];
  for (;;) {
    const page = await api.call(api.client.GET('/api/boards/', { params: { query: { limit: 1000, offset: boards.length } } }));
    boards.push(...page.boards);
    if (page.boards.length === 0 || boards.length >= page.total) return boards;
  }
}

/**
 * The board `--board` names: its id, its name, or the start of its id (as `mm ops ls`
 * shows it), one board only. A whole id is that board. Otherwise every board the value could
 * mean counts (its name, in any case, and the start of an id): a board named with the first
 * characters of another board's id is refused with both listed, never picked on a guess
 * (docs/security.md). A name that matches nothing is a usage error with the names there are.
 */
export function pickBoard(boards: Board[], given: string): Board {
  const byId = boards.find((b) => b.id.toLowerCase() === given.toLowerCase());
  if (byId && UUID.test(given)) return byId;
  const named = boards.filter((b) => b.name === given);
  const byName = named.length ? named : boards.filter((b) => b.name.toLowerCase() === given.toLowerCase());
  const byPrefix = given.length < 4 ? [] : boards.filter((b) => b.id.toLowerCase().startsWith(given.toLowerCase()));
  const candidates = [...new Set([...byName, ...byPrefix])];
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length > 1) {
    const how = (b: Board) => (byName.includes(b) ? 'named so' : 'its id starts so');
    throw new UsageError(
      `${JSON.stringify(given)} is ambiguous: ${candidates.map((b) => `${b.name} (${b.id}, ${how(b)})`).join(', ')}.`,
      'Name the board by its whole id (see `mm boards ls`).',
    );
  }
  const known = boards.length ? `the boards are ${boards.map((b) => `${b.name} (${b.id.slice(0, 8)})`).join(', ')}` : 'no board is registered';
  throw new UsageError(`No board is named ${JSON.stringify(given)} (${known}).`, 'See `mm boards ls`.');
}

/** `--board` as the id the API takes, or undefined when not given (the server then picks the only board). */
export async function boardIdOf(api: Api, given: string | undefined): Promise<string | undefined> {
  if (given === undefined) return undefined;
  // An id goes as it is (one request less); the server answers for an unknown one.
  if (UUID.test(given)) return given;
  return pickBoard(await allBoards(api), given).id;
}

/**
 * The board a run goes to, checked before anything is created: named by `--board`, or the
 * only one registered; online (else exit 3, as the server would answer after the upload).
 */
export async function runBoard(api: Api, given: string | undefined): Promise<Board> {
  const boards = await allBoards(api);
  if (boards.length === 0) {
    throw new CliError(EXIT.unreachable, 'No board is registered.', 'Register a board with `mm boards add <name>` and start its agent.');
  }
  let board: Board;
  if (given !== undefined) board = pickBoard(boards, given);
  else if (boards.length === 1) board = boards[0]!;
  else {
    throw new UsageError(
      `Several boards are registered (${boards.map((b) => b.name).join(', ')}): name one with --board.`,
      'Give its name or id (see `mm boards ls`).',
    );
  }
  if (board.status === 'offline') {
    throw new CliError(EXIT.unreachable, `Board ${board.name} (${board.id}) is offline.`, "Start the board's agent (mm-agent) or check its network, then try again.");
  }
  return board;
}
