import { formatLabels, parseLabelPair, type Labels } from '@mm/api-client';
import type { Command } from 'commander';
import { say } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table, when } from '../format.ts';
import { withContext } from './shared.ts';

/** `--label k=v`, repeatable. */
function collectLabel(value: string, labels: Labels): Labels {
  const pair = parseLabelPair(value);
  if (!pair) throw new UsageError(`--label takes key=value (got ${JSON.stringify(value)}).`);
  return { ...labels, [pair[0]]: pair[1] };
}

/** `mm keys ls|create|rm`: provisioning keys boards enroll with (docs/enrollment.md). */
export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('provisioning keys boards enroll with (admin)');
  keys
    .command('ls')
    .description('list provisioning keys')
    .action(
      withContext(async (ctx) => {
        const page = await ctx.api.call(ctx.api.client.GET('/api/provisioning-keys/'));
        ctx.result(page, () =>
          say(
            table(
              ['ID', 'NAME', 'APPROVAL', 'LABELS', 'BOARDS', 'EXPIRES'],
              page.provisioning_keys.map((k) => [k.id, k.name, k.approval, formatLabels(k.labels, ','), `${k.boards_enrolled}${k.max_boards === null ? '' : `/${k.max_boards}`}`, when(k.expires_at)]),
            ),
          ),
        );
      }),
    );
  keys
    .command('create <name>')
    .description('make a key; prints it (shown this once) and the install command that uses it')
    .option('--label <k=v>', 'a label every board enrolled with it gets (repeatable)', collectLabel, {})
    .option('--manual', 'boards wait for an admin to approve them')
    .option('--max-boards <n>', 'how many boards may enroll with it')
    .option('--expires <iso-time>', 'when it stops working')
    .action(
      withContext(async (ctx, opts: { label: Record<string, string>; manual?: boolean; maxBoards?: string; expires?: string }, name: string) => {
        if (opts.maxBoards !== undefined && !/^[1-9]\d{0,6}$/.test(opts.maxBoards)) throw new UsageError('--max-boards must be a positive whole number.');
        const key = await ctx.api.call(
          ctx.api.client.POST('/api/provisioning-keys/', {
            body: {
              name,
              labels: opts.label,
              approval: opts.manual ? 'manual' : 'auto',
              ...(opts.maxBoards !== undefined ? { max_boards: Number(opts.maxBoards) } : {}),
              ...(opts.expires !== undefined ? { expires_at: opts.expires } : {}),
            },
          }),
        );
        ctx.result(key, () => {
          say(`Provisioning key ${key.id} (${key.name}, ${key.approval} approval) created.`);
          say(`Key (shown this once): ${key.key}`);
          if (key.install_command) {
            say('Install the agent on a board with it:');
            say(`  ${key.install_command}`);
            if (key.install_warning) say(`Warning: ${key.install_warning}`);
          }
        });
      }),
    );
  keys
    .command('rm <id>')
    .description('delete a key (boards enrolled with it stay)')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        await ctx.api.call(ctx.api.client.DELETE('/api/provisioning-keys/{id}/', { params: { path: { id } } }));
        ctx.result({ deleted: id }, () => say(`Deleted provisioning key ${id}.`));
      }),
    );
}
