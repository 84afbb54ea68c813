import { Api } from './api.ts';
import { Progress } from './progress.ts';
import { type GlobalOptions, resolveSettings, type Settings } from './settings.ts';

/** What every command gets: settings, the API, progress on stderr, output on stdout, Ctrl-C. */
export interface CommandContext {
  settings: Settings;
  api: Api;
  progress: Progress;
  /** Aborted on Ctrl-C: commands stop cleanly (and say what was kept). */
  signal: AbortSignal;
  /** Prints the command's result: `json` as one document with --json, else `human()`. */
  result(json: unknown, human: () => void): void;
}

export const interrupt = new AbortController();

export async function commandContext(opts: GlobalOptions): Promise<CommandContext> {
  const settings = await resolveSettings(opts);
  return {
    settings,
    api: new Api(settings.server, settings.token),
    progress: new Progress(Boolean(process.stderr.isTTY), settings.json),
    signal: interrupt.signal,
    result(json, human) {
      if (settings.json) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
      else human();
    },
  };
}

export const say = (line = '') => process.stdout.write(`${line}\n`);

/** An exit status a command chose itself (`mm shell`: the remote shell's), instead of 0. */
let chosenExitCode: number | undefined;
export function setCommandExitCode(code: number): void {
  chosenExitCode = code;
}
export function commandExitCode(): number | undefined {
  return chosenExitCode;
}
