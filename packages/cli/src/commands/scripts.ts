import fs from 'node:fs';
import path from 'node:path';
import { readEventStream } from '@mm/api-client';
import type { Command } from 'commander';
import { type Api, apiPath } from '../api.ts';
import { boardIdOf } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { describeCommand, describeEvent } from '../device-state.ts';
import { CliError, EXIT, UsageError } from '../errors.ts';
import { followOperation } from '../follow.ts';
import { InterruptedError } from '../errors.ts';
import { table } from '../format.ts';
import { withContext } from './shared.ts';

const MOTIONS = ['forward', 'backward', 'left', 'right', 'stop'];

/** --script, else the catalogue's GPIO script. */
async function scriptId(api: Api, given: string | undefined): Promise<string> {
  if (given) return given;
  const page = await api.call(api.client.GET('/api/device-scripts/', { params: { query: { device_type: 'gpio' } } }));
  const first = page.scripts[0];
  if (!first) throw new CliError(EXIT.failed, 'The catalogue has no gpio script.', 'Name one with --script <id> (see `mm scripts ls`).');
  return first.id;
}

async function proxy(ctx: CommandContext, opts: { script?: string; board?: string }, route: string, body?: unknown, query: Record<string, string> = {}) {
  const id = await scriptId(ctx.api, opts.script);
  // The relay passes any route and query to the script: a raw request (the typed client
  // would encode the route's slashes).
  const url = ctx.api.url(apiPath('/api/device-scripts/{id}/proxy/{path}', { id, path: route }), { board_id: await boardIdOf(ctx.api, opts.board), ...query });
  const res = await ctx.api.fetchRaw(url, {
    method: 'POST',
    expectJson: true,
    signal: ctx.signal,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw await ctx.api.problemOf(res);
  const state = (await res.json()) as unknown;
  ctx.result(state, () => say(describeCommand(state)));
}

/** A catalogue entry named by its id, its name (any case) or the start of its id. */
async function resolveScript(api: Api, given: string): Promise<{ id: string; name: string; version: string }> {
  const page = await api.call(api.client.GET('/api/device-scripts/', { params: { query: { limit: 1000 } } }));
  const lower = given.toLowerCase();
  const byId = page.scripts.filter((s) => s.id === lower);
  const byName = byId.length ? byId : page.scripts.filter((s) => s.name === given || s.name.toLowerCase() === lower);
  const found = byName.length ? byName : lower.length >= 4 ? page.scripts.filter((s) => s.id.startsWith(lower)) : [];
  if (found.length === 1) return found[0]!;
  if (found.length > 1) throw new UsageError(`Several device scripts match ${JSON.stringify(given)}: ${found.map((s) => `${s.name} (${s.id})`).join(', ')}.`, 'Name one by its id.');
  throw new UsageError(`No device script is named ${JSON.stringify(given)}.`, 'See `mm scripts ls`.');
}

type ScriptAction = 'deploy' | 'start' | 'stop' | 'restart';

/** Starts the operation (`--board` required: one board), follows it and says how it ended. */
async function scriptOperation(ctx: CommandContext, action: ScriptAction, given: string, board: string | undefined): Promise<void> {
  if (!board) throw new UsageError(`mm scripts ${action} needs --board <board> (the board's name or id).`);
  const script = await resolveScript(ctx.api, given);
  const boardId = await boardIdOf(ctx.api, board);
  const res = await ctx.api.fetchRaw(ctx.api.url(`/api/device-scripts/${script.id}/${action}/`), {
    method: 'POST',
    expectJson: true,
    signal: ctx.signal,
    headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify({ board_id: boardId }),
  });
  if (!res.ok) throw await ctx.api.problemOf(res);
  const op = (await res.json()) as { id: number };
  ctx.progress.note(`${action} ${script.name}${action === 'deploy' ? ` ${script.version}` : ''} (operation ${op.id})`);
  const final = await followOperation(ctx.api, op.id, { log: (_s, d) => ctx.progress.note(d.trimEnd()) }, ctx.signal).catch((err: unknown) => {
    if (err instanceof InterruptedError) throw new InterruptedError(`Stopped following operation ${op.id}; it keeps going.`, `Follow it again with: mm ops logs ${op.id} -f`);
    throw err;
  });
  if (final.status !== 'succeeded') {
    throw new CliError(EXIT.failed, `${action} of ${script.name} ${final.status}${final.error ? ` (${final.error.code}: ${final.error.message})` : ''}.`, `See: mm ops logs ${op.id}`, { operation: final });
  }
  const state = (final.result as { state?: { state?: string; port?: number; version?: string } } | null)?.state;
  ctx.result(final, () => say(`${script.name}${state?.version ? ` ${state.version}` : ''}: ${state?.state ?? 'done'}${state?.port ? ` on port ${state.port}` : ''} (operation ${op.id}).`));
}

export function registerScripts(program: Command): void {
  const scripts = program.command('scripts').description('the device-script catalogue, and scripts deployed on boards');
  scripts
    .command('ls')
    .description('list device scripts')
    .action(
      withContext(async (ctx) => {
        const page = await ctx.api.call(ctx.api.client.GET('/api/device-scripts/'));
        ctx.result(page, () => say(table(['ID', 'NAME', 'TYPE', 'PORT', 'VERSION'], page.scripts.map((s) => [s.id, s.name, s.device_type, s.port, s.version]))));
      }),
    );

  scripts
    .command('upload <script> <file>')
    .description("set the program of the script's current version (admin)")
    .action(
      withContext(async (ctx, _opts: object, given: string, file: string) => {
        const script = await resolveScript(ctx.api, given);
        const bytes = await fs.promises.readFile(file);
        const form = new FormData();
        form.append('file', new Blob([bytes]), path.basename(file));
        const res = await ctx.api.fetchRaw(ctx.api.url(`/api/device-scripts/${script.id}/file/`), { method: 'PUT', body: form, expectJson: true, signal: ctx.signal });
        if (!res.ok) throw await ctx.api.problemOf(res);
        const program = (await res.json()) as { version: string; size: number; sha256: string };
        ctx.result(program, () => say(`${script.name} ${program.version}: ${program.size} bytes, sha256 ${program.sha256}.`));
      }),
    );

  for (const [action, what] of [
    ['deploy', "deploy the script's current program to a board: written, started, health-checked (admin)"],
    ['start', 'start the script deployed on a board'],
    ['stop', 'stop the script deployed on a board'],
    ['restart', 'restart the script deployed on a board'],
  ] as const) {
    scripts
      .command(`${action} <script>`)
      .description(what)
      .option('--board <board>', "the board's name or id")
      .action(withContext(async (ctx, opts: { board?: string }, given: string) => scriptOperation(ctx, action, given, opts.board)));
  }

  scripts
    .command('logs <script>')
    .description("print the script's recent output on a board")
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }, given: string) => {
        if (!opts.board) throw new UsageError('mm scripts logs needs --board <board> (the board\'s name or id).');
        const script = await resolveScript(ctx.api, given);
        const res = await ctx.api.fetchRaw(ctx.api.url(`/api/device-scripts/${script.id}/logs/`, { board_id: await boardIdOf(ctx.api, opts.board) }), { signal: ctx.signal });
        if (!res.ok) throw await ctx.api.problemOf(res);
        const text = await res.text();
        if (ctx.settings.json) say(JSON.stringify({ script_id: script.id, logs: text }));
        else process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
      }),
    );

  scripts
    .command('states')
    .description('the scripts deployed on a board and their states')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }) => {
        if (!opts.board) throw new UsageError('mm scripts states needs --board <board>.');
        const boardId = await boardIdOf(ctx.api, opts.board);
        const res = await ctx.api.fetchRaw(ctx.api.url(`/api/boards/${boardId}/scripts/`), { expectJson: true, signal: ctx.signal });
        if (!res.ok) throw await ctx.api.problemOf(res);
        const page = (await res.json()) as { scripts: Array<{ script_id: string; name: string; version: string; port: number; state: string; since: string; restarts: number }> };
        ctx.result(page, () => say(table(['NAME', 'VERSION', 'PORT', 'STATE', 'SINCE', 'RESTARTS'], page.scripts.map((s) => [s.name, s.version, s.port, s.state, s.since, s.restarts]))));
      }),
    );

  program
    .command('motor <motion>')
    .description(`drive the GPIO motor script: ${MOTIONS.join(', ')}`)
    .option('--script <id>', 'the device script (default: the catalogue\'s gpio script)')
    .option('--board <board>', "the board's name or id")
    .option('--for <seconds>', "drive this long (0.05–60 s), then the script stops by itself (default: the script's own hold, MM_GPIO_DRIVE_TIMEOUT_MS)")
    .action(
      withContext(async (ctx, opts: { script?: string; board?: string; for?: string }, motion: string) => {
        if (!MOTIONS.includes(motion)) throw new UsageError(`The motion must be one of ${MOTIONS.join(', ')} (got ${JSON.stringify(motion)}).`);
        const seconds = opts.for === undefined ? undefined : Number(opts.for);
        if (seconds !== undefined && (!/^\d+(\.\d+)?$/.test(opts.for ?? '') || seconds < 0.05 || seconds > 60)) {
          throw new UsageError(`--for must be a number of seconds from 0.05 to 60 (got ${JSON.stringify(opts.for)}).`);
        }
        if (seconds !== undefined && motion === 'stop') throw new UsageError('--for goes with a motion, not with stop.');
        // The script's dead-man hold: a drive command stops by itself unless renewed (or held this long).
        await proxy(ctx, opts, `motor/${motion}`, undefined, seconds === undefined ? {} : { hold_ms: String(Math.round(seconds * 1000)) });
      }),
    );

  program
    .command('servo <angle>')
    .description('set the steering servo angle (0–180 degrees)')
    .option('--script <id>', 'the device script (default: the catalogue\'s gpio script)')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { script?: string; board?: string }, angle: string) => {
        const n = Number(angle);
        if (!/^\d+(\.\d+)?$/.test(angle) || n > 180) throw new UsageError(`The angle must be a number from 0 to 180 (got ${JSON.stringify(angle)}).`);
        await proxy(ctx, opts, 'servo', { angle: n });
      }),
    );

  program
    .command('events')
    .description("print the device script's live events until Ctrl-C")
    .option('--script <id>', 'the device script (default: the catalogue\'s gpio script)')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { script?: string; board?: string }) => {
        const id = await scriptId(ctx.api, opts.script);
        const res = await ctx.api.answer(
          ctx.api.client.GET('/api/device-scripts/{id}/stream/', {
            params: { path: { id }, query: { board_id: await boardIdOf(ctx.api, opts.board) } },
            headers: { accept: 'text/event-stream' },
            parseAs: 'stream',
            signal: ctx.signal,
          }),
        ).catch((err: unknown) => {
          if (ctx.signal.aborted) return undefined;
          throw err;
        });
        if (!res?.body) return;
        if (!ctx.settings.json) process.stderr.write('Live events of the device script (Ctrl-C stops):\n');
        try {
          for await (const e of readEventStream(res.body)) {
            const data = safeJson(e.data);
            if (ctx.settings.json) say(JSON.stringify({ event: e.event, ...(e.id !== undefined ? { id: e.id } : {}), data }));
            else say(describeEvent(e.event, data));
          }
        } catch (err) {
          if (!ctx.signal.aborted) throw err;
        }
      }),
    );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
