import type { Command } from 'commander';
import { type Api, apiPath } from '../api.ts';
import { boardIdOf } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { describeCommand, describeEvent } from '../device-state.ts';
import { CliError, EXIT, UsageError } from '../errors.ts';
import { sseEvents } from '../follow.ts';
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

export function registerScripts(program: Command): void {
  const scripts = program.command('scripts').description('the device-script catalogue');
  scripts
    .command('ls')
    .description('list device scripts')
    .action(
      withContext(async (ctx) => {
        const page = await ctx.api.call(ctx.api.client.GET('/api/device-scripts/'));
        ctx.result(page, () => say(table(['ID', 'NAME', 'TYPE', 'PORT', 'VERSION'], page.scripts.map((s) => [s.id, s.name, s.device_type, s.port, s.version]))));
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
          for await (const e of sseEvents(res.body)) {
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
