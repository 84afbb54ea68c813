import type { Command } from 'commander';
import WebSocket from 'ws';
import { boardIdOf } from '../board-choice.ts';
import { setCommandExitCode, type CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { withContext } from './shared.ts';

/** The exit status when the session ended without one of the shell's (the board went, idle, refused). */
const NO_STATUS = 255;

interface ExitFrame {
  type: 'exit';
  code: number | null;
  reason?: string;
  message?: string;
}

/**
 * `mm shell <board>`: a login shell on the board (docs/terminal.md) in this terminal. Raw mode
 * (every key goes to the board, Ctrl-C included), the window's size at the start and on every
 * SIGWINCH, and `mm` exits with the shell's exit status (255 when the session ended otherwise,
 * with the reason on stderr).
 */
export function registerShell(program: Command): void {
  program
    .command('shell <board>')
    .description("a login shell on the board (its name or id); needs the board's reservation, or admin")
    .action(withContext(async (ctx, _opts, given: string) => shell(ctx, given)));
}

async function shell(ctx: CommandContext, given: string): Promise<void> {
  const boardId = (await boardIdOf(ctx.api, given))!;
  const stdin = process.stdin;
  const stdout = process.stdout;
  const size = () => ({ cols: stdout.columns || 80, rows: stdout.rows || 24 });
  const url = new URL(`api/boards/${boardId}/terminal/`, ctx.settings.server.endsWith('/') ? ctx.settings.server : `${ctx.settings.server}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('cols', String(size().cols));
  url.searchParams.set('rows', String(size().rows));
  const ws = new WebSocket(url, { headers: ctx.settings.token ? { authorization: `Bearer ${ctx.settings.token}` } : {}, perMessageDeflate: false });

  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => reject(refusal(res.statusCode ?? 0, body)));
    });
    ws.once('error', (err) => reject(new CliError(EXIT.unreachable, `Could not open the terminal: ${err.message}.`)));
  });

  let exit: ExitFrame | undefined;
  const raw = stdin.isTTY === true;
  if (raw) stdin.setRawMode(true);
  const onKeys = (data: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(data, { binary: true });
  };
  const onResize = () => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'resize', ...size() }));
  };
  stdin.on('data', onKeys);
  stdin.resume();
  process.on('SIGWINCH', onResize);
  // Ctrl-C is a key for the board in raw mode; without a terminal (a pipe) it still goes there.
  const onSigint = () => onKeys(Buffer.from([3]));
  process.prependListener('SIGINT', onSigint);
  ws.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      // The board waits for the socket's reads: a slow terminal here holds the shell's output back.
      if (!stdout.write(bytes)) {
        ws.pause();
        stdout.once('drain', () => ws.resume());
      }
      return;
    }
    try {
      const m = JSON.parse(bytes.toString('utf8')) as ExitFrame;
      if (m.type === 'exit') exit = m;
    } catch {
      // not ours
    }
  });
  await new Promise<void>((resolve) => ws.once('close', () => resolve()));
  process.off('SIGWINCH', onResize);
  process.off('SIGINT', onSigint);
  stdin.off('data', onKeys);
  if (raw) stdin.setRawMode(false);
  stdin.pause();
  if (exit?.code !== null && exit?.code !== undefined) {
    setCommandExitCode(exit.code);
    return;
  }
  const why = exit?.message ?? 'The connection to the server closed.';
  process.stderr.write(`\r\nmm: ${why}${exit?.reason ? ` (${exit.reason})` : ''}\r\n`);
  setCommandExitCode(NO_STATUS);
}

function refusal(status: number, body: string): CliError {
  let problem: { code?: string; detail?: string } = {};
  try {
    problem = JSON.parse(body) as typeof problem;
  } catch {
    // no body
  }
  const detail = problem.detail ?? `The server refused the terminal (HTTP ${status}).`;
  if (status === 401 || status === 403) {
    const hint = problem.code === 'reservation_required' ? 'Reserve the board first: mm reserve <board>.' : problem.code === 'terminal_disabled' ? "The board's agent has MM_TERMINAL=off." : 'Log in with `mm login` as an operator or admin.';
    return new CliError(EXIT.auth, detail, hint);
  }
  if (status === 503 || status === 404) return new CliError(EXIT.unreachable, detail);
  return new CliError(EXIT.failed, detail);
}
