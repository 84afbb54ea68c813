import { registerHealthChecks } from './commands/health-checks.ts';
import { Command, CommanderError, Option } from 'commander';
import { registerBoards, registerOps, registerPac } from './commands/boards.ts';
import { registerInvocations } from './commands/invocations.ts';
import { registerKeys } from './commands/keys.ts';
import { registerLogin } from './commands/login.ts';
import { registerRun } from './commands/run.ts';
import { registerScripts } from './commands/scripts.ts';
import { registerRollouts } from './commands/rollouts.ts';
import { registerApps } from './commands/apps.ts';
import { registerWebhooks } from './commands/webhooks.ts';
import { registerReservations } from './commands/reservations.ts';
import { registerCompare } from './commands/compare.ts';
import { registerShell } from './commands/shell.ts';
import { commandExitCode, interrupt } from './context.ts';
import { CliError, EXIT, InterruptedError } from './errors.ts';

export const CLI_VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command('mm')
    .description('Model Manager command-line client: run AI model invocations on FPGA boards')
    .version(CLI_VERSION)
    .addOption(new Option('--server <url>', 'the control plane (else MM_SERVER_URL, else the saved login, else http://127.0.0.1:8000)'))
    .addOption(new Option('--token <token>', 'API token (else MM_API_TOKEN, else the saved login)'))
    .option('--json', 'print one JSON document on stdout instead of text')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 done, 1 the operation failed or was cancelled, 2 usage, 3 server unreachable,\nno board or board offline, 4 not authenticated or forbidden, 130 interrupted.',
    )
    .exitOverride();
  // Every command gets the same error handling (usage errors exit 2, not commander's 1).
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerLogin(program);
  registerRun(program);
  registerInvocations(program);
  registerBoards(program);
  registerOps(program);
  registerPac(program);
  registerScripts(program);
  registerKeys(program);
  registerRollouts(program);
  registerApps(program);
  registerWebhooks(program);
  registerReservations(program);
  registerCompare(program);
  registerHealthChecks(program);
  registerShell(program);
  for (const c of allCommands(program)) c.exitOverride().showHelpAfterError('(run with --help for usage)');
  return program;
}

function allCommands(c: Command): Command[] {
  return c.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}

/** Runs the client; resolves with the exit code (never throws, never prints a stack). */
export async function main(argv: string[]): Promise<number> {
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(EXIT.interrupted);
    interrupt.abort(new InterruptedError());
  };
  process.on('SIGINT', onSigint);
  const json = argv.includes('--json');
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return commandExitCode() ?? (interrupt.signal.aborted ? EXIT.interrupted : EXIT.ok);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      if (err.code === 'commander.executeSubCommandAsync') return EXIT.ok;
      return EXIT.usage;
    }
    const cliError = toCliError(err);
    if (json) {
      process.stdout.write(`${JSON.stringify({ error: { message: cliError.message, hint: cliError.hint ?? null, exit_code: cliError.exitCode, ...cliError.details } }, null, 2)}\n`);
    }
    process.stderr.write(`mm: ${cliError.message}\n`);
    if (cliError.hint) process.stderr.write(`    ${cliError.hint}\n`);
    return cliError.exitCode;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (interrupt.signal.aborted) return new InterruptedError();
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT' || e?.code === 'EACCES' || e?.code === 'EISDIR') {
    return new CliError(EXIT.failed, `${e.code === 'ENOENT' ? 'No such file' : 'Cannot use'}: ${e.path ?? e.message}.`);
  }
  if (process.env.MM_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  return new CliError(EXIT.failed, `Unexpected error: ${(err as Error)?.message ?? String(err)}`, 'Set MM_DEBUG=1 to see where it happened.');
}
