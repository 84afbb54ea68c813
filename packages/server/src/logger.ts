import pino from 'pino';
import { prettyLogStream } from './log-pretty.ts';

export type Logger = pino.Logger;

export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Structured JSON logs on stdout, one object per line; on a terminal (`auto`) or with
 * `pretty`, one readable line per entry instead (log-pretty.ts).
 */
export function createLogger(level: string, format: LogFormat = 'json'): Logger {
  const options = { level, base: { service: 'mm-server' }, timestamp: pino.stdTimeFunctions.isoTime };
  const pretty = format === 'pretty' || (format === 'auto' && Boolean(process.stdout.isTTY));
  return pretty ? pino(options, prettyLogStream(process.stdout)) : pino(options);
}
