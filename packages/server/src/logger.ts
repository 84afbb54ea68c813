import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs on stdout, one object per line. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'mm-server' }, timestamp: pino.stdTimeFunctions.isoTime });
}
