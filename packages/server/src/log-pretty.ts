/**
 * pino's JSON lines as a person reads them on a terminal: time, level, message, then the
 * other fields as `key=value`; a request is `GET /api/x/ 200 3.1 ms`; an error's stack on
 * the lines below. Colours only when the destination is a terminal.
 */
const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: 'TRACE', colour: '90' },
  20: { name: 'DEBUG', colour: '90' },
  30: { name: 'INFO ', colour: '32' },
  40: { name: 'WARN ', colour: '33' },
  50: { name: 'ERROR', colour: '31' },
  60: { name: 'FATAL', colour: '41;97' },
};

const LEVEL_NUMBERS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/** Fields every line has or that the line's head already shows. */
const SHOWN = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname', 'component', 'err', 'method', 'path', 'status', 'duration_ms', 'req_id']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

/** One entry (pino's parsed JSON) as one or more lines, without the final newline. */
export function formatLogEntry(entry: Record<string, unknown>, colour = false): string {
  const paint = (code: string, s: string) => (colour ? `\u001b[${code}m${s}\u001b[0m` : s);
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : new Date().toISOString().slice(11, 23);
  // pino writes numbers; the agent's own logger writes the names.
  const number = typeof entry.level === 'string' ? LEVEL_NUMBERS[entry.level] : Number(entry.level);
  const level = (number !== undefined ? LEVELS[number] : undefined) ?? { name: String(entry.level).padEnd(5), colour: '0' };
  const component = typeof entry.component === 'string' ? paint('36', `[${entry.component}] `) : '';
  const isRequest = entry.msg === 'request' && typeof entry.method === 'string';
  const message = isRequest
    ? `${entry.method} ${String(entry.path)} ${paint(Number(entry.status) >= 400 ? '33' : '0', String(entry.status))} ${String(entry.duration_ms)} ms`
    : String(entry.msg ?? '');
  const rest = Object.entries(entry)
    .filter(([k, v]) => !SHOWN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(' ');
  let text = `${paint('90', time)} ${paint(level.colour, level.name)} ${component}${message}${rest ? `  ${paint('90', rest)}` : ''}`;
  const err = entry.err as { message?: unknown; stack?: unknown } | undefined;
  if (err && typeof err === 'object') {
    const stack = typeof err.stack === 'string' ? err.stack : String(err.message ?? '');
    text += `\n${stack.replace(/^/gm, '    ')}`;
  }
  return text;
}

/**
 * A destination for JSON log lines (pino's, or a child process's stdout chunk by chunk) that
 * writes each entry formatted to `out`; what is not JSON goes through as it is.
 */
export function prettyLogStream(out: NodeJS.WritableStream & { isTTY?: boolean }): { write(chunk: string | Buffer): void } {
  const colour = Boolean(out.isTTY) && !process.env.NO_COLOR;
  let pending = '';
  return {
    write(chunk) {
      pending += String(chunk);
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        let entry: unknown;
        try {
          entry = JSON.parse(line);
        } catch {
          entry = undefined;
        }
        out.write(entry && typeof entry === 'object' ? `${formatLogEntry(entry as Record<string, unknown>, colour)}\n` : `${line}\n`);
      }
    },
  };
}
