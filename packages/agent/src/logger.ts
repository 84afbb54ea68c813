/**
 * Structured logs: one JSON object per line on stdout (`{"time","level","msg",...}`), in the
 * shape pino writes, so the same tools read the server's and the agent's logs. The agent has
 * no other dependency that needs pino, so it carries this small one.
 */

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const levelNumber: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

type Fields = Record<string, unknown>;
type LogMethod = (fieldsOrMsg: Fields | string, msg?: string) => void;

export interface Logger {
  readonly level: LogLevel;
  trace: LogMethod;
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  fatal: LogMethod;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Fields): Logger;
}

/** Errors do not serialize to JSON by themselves; log their name, message, code and stack. */
function serializable(value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { type: value.name, message: value.message, ...(code !== undefined ? { code } : {}), stack: value.stack };
  }
  return value;
}

export function createLogger(
  level: LogLevel,
  bindings: Fields = { service: 'mm-agent' },
  write: (line: string) => void = (line) => process.stdout.write(line),
): Logger {
  const threshold = levelNumber[level];
  const method =
    (name: Exclude<LogLevel, 'silent'>): LogMethod =>
    (fieldsOrMsg, msg) => {
      if (levelNumber[name] < threshold) return;
      const fields = typeof fieldsOrMsg === 'string' ? {} : fieldsOrMsg;
      const text = typeof fieldsOrMsg === 'string' ? fieldsOrMsg : msg;
      const record: Fields = { level: name, time: new Date().toISOString(), ...bindings };
      for (const [k, v] of Object.entries(fields)) record[k] = serializable(v);
      if (text !== undefined) record.msg = text;
      let line: string;
      try {
        line = JSON.stringify(record);
      } catch {
        line = JSON.stringify({ level: name, time: record.time, ...bindings, msg: text, note: 'fields not serializable' });
      }
      write(line + '\n');
    };
  return {
    level,
    trace: method('trace'),
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    fatal: method('fatal'),
    child: (more) => createLogger(level, { ...bindings, ...more }, write),
  };
}

/** A logger that drops everything (tests that do not care about logs). */
export const silentLogger: Logger = createLogger('silent');
