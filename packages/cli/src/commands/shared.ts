import type { Command } from 'commander';
import { type CommandContext, commandContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { GlobalOptions } from '../settings.ts';

/**
 * Wraps a command's action: builds its context from the global options (--server, --token,
 * --json) and passes the command's own options and arguments.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- commander passes positional arguments of any shape
export function withContext<O>(fn: (ctx: CommandContext, opts: O, ...args: any[]) => Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const opts = command.opts() as O;
    const positional = args.slice(0, -2);
    const ctx = await commandContext(command.optsWithGlobals() as GlobalOptions);
    await fn(ctx, opts, ...positional);
  };
}

/** A positive integer id argument, or a usage error. */
export function positiveId(value: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(value)) throw new UsageError(`The ${what} must be a positive integer (got ${JSON.stringify(value)}).`);
  return Number(value);
}
