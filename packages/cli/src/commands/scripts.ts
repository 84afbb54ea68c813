import type { Command } from 'commander';
import { type Api, problemOf } from '../api.ts';
import { type CommandContext, say } from '../context.ts';
import { CliError, EXIT, unreachable, UsageError } from '../errors.ts';
import { table } from '../format.ts';
import { withContext } from './shared.ts';

interface DeviceScript {
  id: string;
  name: string;
  device_type: string;
  port: number;
  version: string;
  description: string;
}

const MOTIONS = ['forward', 'backward', 'left', 'right', 'stop'];

/** --script, else the catalogue's GPIO script. */
async function scriptId(api: Api, given: string | undefined): Promise<string> {
  if (given) return given;
  const page = await api.get<{ scripts: DeviceScript[] }>('/api/device-scripts/', { device_type: 'gpio' });
  const first = page.scripts[0];
  if (!first) throw new CliError(EXIT.failed, 'The catalogue has no gpio script.', 'Name one with --script <id> (see `mm scripts ls`).');
  return first.id;
}

async function proxy(ctx: CommandContext, opts: { script?: string; board?: string }, route: string, body?: unknown, query: Record<string, string> = {}) {
  const id = await scriptId(ctx.api, opts.script);
  const state = await ctx.api.json<unknown>('POST', `/api/device-scripts/${id}/proxy/${route}`, {
    query: { board_id: opts.board, ...query },
    ...(body !== undefined ? { json: body } : {}),
  });
  ctx.result(state, () => say(JSON.stringify(state)));
}

export function registerScripts(program: Command): void {
  const scripts = program.command('scripts').description('the device-script catalogue');
  scripts
    .command('ls')
    .description('list device scripts')
    .action(
      withContext(async (ctx) => {
        const page = await ctx.api.get<{ scripts: DeviceScript[]; total: number }>('/api/device-scripts/');
        ctx.result(page, () => say(table(['ID', 'NAME', 'TYPE', 'PORT', 'VERSION'], page.scripts.map((s) => [s.id, s.name, s.device_type, s.port, s.version]))));
      }),
    );

  program
    .command('motor <motion>')
    .description(`drive the GPIO motor script: ${MOTIONS.join(', ')}`)
    .option('--script <id>', 'the device script (default: the catalogue\'s gpio script)')
    .option('--board <id>', 'the board')
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
    .option('--board <id>', 'the board')
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
    .option('--board <id>', 'the board')
    .action(
      withContext(async (ctx, opts: { script?: string; board?: string }) => {
        const id = await scriptId(ctx.api, opts.script);
        let res: Response;
        try {
          res = await fetch(ctx.api.url(`/api/device-scripts/${id}/stream/`, { board_id: opts.board }), {
            headers: { ...ctx.api.authHeaders(), accept: 'text/event-stream' },
            signal: ctx.signal,
          });
        } catch (err) {
          if (ctx.signal.aborted) return;
          throw unreachable(ctx.api.server, err);
        }
        if (!res.ok || !res.body) throw await problemOf(res);
        const decoder = new TextDecoder();
        let buffer = '';
        let event = 'message';
        try {
          for await (const chunk of res.body) {
            buffer += decoder.decode(chunk, { stream: true });
            let nl: number;
            while ((nl = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, nl).replace(/\r$/, '');
              buffer = buffer.slice(nl + 1);
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) {
                const data = line.slice(5).trim();
                if (ctx.settings.json) say(JSON.stringify({ event, data: safeJson(data) }));
                else say(`${event}: ${data}`);
              } else if (line === '') event = 'message';
            }
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
