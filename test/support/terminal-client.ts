/**
 * A terminal client for tests and benchmarks: the WebSocket of `GET /api/boards/<id>/terminal/`,
 * what arrived so far as text, waits for output, keystrokes, resizes, and the exit frame.
 */
import WebSocket from 'ws';

export interface TerminalExit {
  type: 'exit';
  code: number | null;
  reason?: string;
  message?: string;
}

export interface TerminalClient {
  ws: WebSocket;
  /** Everything the terminal printed so far. */
  output(): string;
  /** Resolves with the output once `match` holds for what arrived after `from` (a length of output()). */
  waitFor(match: RegExp | string, opts?: { from?: number; timeoutMs?: number }): Promise<string>;
  type(keys: string | Buffer): void;
  resize(cols: number, rows: number): void;
  /** The exit frame (or undefined if the socket closed without one). */
  exit: Promise<TerminalExit | undefined>;
  /** Called with each binary frame as it arrives (benchmarks). */
  onBytes?: (bytes: Buffer) => void;
  /** False: output is no longer kept for output() and waitFor() (a benchmark's flood counts it with onBytes instead). */
  keepOutput: boolean;
  close(): void;
}

/** Opens a terminal; rejects with `{ status, body }` when refused before the upgrade. */
export function openTerminal(baseUrl: string, boardId: string, headers: Record<string, string>, size = { cols: 80, rows: 24 }): Promise<TerminalClient> {
  const url = new URL(`/api/boards/${boardId}/terminal/?cols=${size.cols}&rows=${size.rows}`, baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  let text = '';
  const waiters = new Set<() => void>();
  let exitFrame: TerminalExit | undefined;
  const exit = new Promise<TerminalExit | undefined>((resolve) => ws.on('close', () => resolve(exitFrame)));
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => reject(Object.assign(new Error(`refused: ${res.statusCode} ${body}`), { status: res.statusCode, body: safeJson(body) })));
      res.on('error', () => reject(Object.assign(new Error(`refused: ${res.statusCode}`), { status: res.statusCode, body: undefined })));
    });
    ws.on('error', (err) => reject(err));
    ws.on('open', () => {
      const client: TerminalClient = {
        ws,
        output: () => text,
        waitFor(match, opts = {}) {
          const from = opts.from ?? 0;
          const test = () => (typeof match === 'string' ? text.slice(from).includes(match) : match.test(text.slice(from)));
          return new Promise((res, rej) => {
            if (test()) return res(text);
            const timer = setTimeout(() => {
              waiters.delete(check);
              rej(new Error(`the terminal did not print ${String(match)} in time; it printed:\n${JSON.stringify(text.slice(from).slice(-2000))}`));
            }, opts.timeoutMs ?? 60_000);
            const check = () => {
              if (!test()) return;
              clearTimeout(timer);
              waiters.delete(check);
              res(text);
            };
            waiters.add(check);
          });
        },
        type: (keys) => ws.send(typeof keys === 'string' ? Buffer.from(keys, 'utf8') : keys, { binary: true }),
        resize: (cols, rows) => ws.send(JSON.stringify({ type: 'resize', cols, rows })),
        exit,
        keepOutput: true,
        close: () => ws.close(),
      };
      ws.on('message', (data, isBinary) => {
        const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (isBinary) {
          client.onBytes?.(buf);
          if (!client.keepOutput) return;
          text += buf.toString('utf8');
          for (const w of [...waiters]) w();
        } else {
          const m = safeJson(buf.toString('utf8')) as TerminalExit | undefined;
          if (m?.type === 'exit') exitFrame = m;
        }
      });
      resolve(client);
    });
  });
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}
