import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { components, paths } from '@mm/api-client';
import type { Operation } from '../api.ts';
import { boardIdOf } from '../board-choice.ts';
import { say, type CommandContext } from '../context.ts';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.ts';
import { followOperation } from '../follow.ts';
import { table, when } from '../format.ts';
import { archiveForm } from './archive-form.ts';
import { withContext } from './shared.ts';

type AppInstallForm = paths['/api/apps/install/']['post']['requestBody']['content']['multipart/form-data'];
type BoardApps = components['schemas']['BoardApps'];

/** Starts an app operation (answered at once: `Prefer: respond-async`), follows its log to the end, fails on failure. */
async function runToEnd(ctx: CommandContext, started: Operation, what: string): Promise<Operation> {
  ctx.progress.note(`${what} (operation ${started.id})`);
  const final = await followOperation(ctx.api, started.id, { log: (_s, d) => ctx.progress.note(d.trimEnd()) }, ctx.signal).catch((err: unknown) => {
    if (err instanceof InterruptedError) throw new InterruptedError(`Stopped following operation ${started.id}; it keeps going.`, `Follow it again with: mm ops logs ${started.id} -f`);
    throw err;
  });
  if (final.status !== 'succeeded') {
    throw new CliError(EXIT.failed, `${what}: ${final.status}${final.error ? ` (${final.error.code}: ${final.error.message.split('\n')[0]})` : ''}.`, `See: mm ops logs ${final.id}`, { operation: final });
  }
  return final;
}

/** `mm apps ls|load|unload|install` (docs/accelerators.md): a board's accelerated applications. */
export function registerApps(program: Command): void {
  const apps = program.command('apps').description("a board's accelerated applications: list, load (no reboot), unload, install");
  apps
    .command('ls')
    .description("list the board's apps, the active one and its DPU (as last reported; --refresh asks the board)")
    .option('--board <board>', "the board's name or id (may be left out when there is one)")
    .option('--refresh', 'ask the board now instead of answering what it last reported')
    .action(
      withContext(async (ctx, opts: { board?: string; refresh?: boolean }) => {
        let id = await boardIdOf(ctx.api, opts.board);
        if (!id) {
          const page = await ctx.api.call(ctx.api.client.GET('/api/boards/'));
          if (page.boards.length !== 1) throw new UsageError(page.boards.length ? 'Several boards are registered: name one with --board.' : 'No board is registered.');
          id = page.boards[0]!.id;
        }
        const raw = await ctx.api.call(ctx.api.client.GET('/api/boards/{id}/apps/', { params: { path: { id }, query: opts.refresh ? { refresh: '1' } : {} } }));
        // A refresh that takes longer than the server waits comes back as its operation: followed to its end.
        const answer: BoardApps = 'kind' in raw ? ((await runToEnd(ctx, raw, 'asking the board for its apps')).result as BoardApps) : raw;
        ctx.result(answer, () => {
          say(table(['APP', 'TYPE', 'ACTIVE', 'SLOT', 'DPU FINGERPRINT'], answer.apps.map((a) => [a.name, a.type, a.active ? 'yes' : '', a.slot ?? '', a.dpu_fingerprint ?? ''])));
          say(answer.dpu ? `DPU: ${answer.dpu.arch} ${answer.dpu.fingerprint}${answer.vai_version ? `, Vitis AI ${answer.vai_version}` : ''}` : 'DPU: none reported');
          if (answer.vart_target) say(`vart.conf: ${answer.vart_target}`);
          say(`reported ${when(answer.reported_at)}`);
        });
      }),
    );
  apps
    .command('load <app>')
    .description('load an app (what holds the slot is unloaded first); waits until the board has verified it')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }, app: string) => {
        // The server refuses an app the board does not list (400 app_not_found) before anything runs.
        const op = (await ctx.api.call(
          ctx.api.client.POST('/api/apps/load/', { body: { app, board_id: await boardIdOf(ctx.api, opts.board) }, params: { header: { prefer: 'respond-async' } } }),
        )) as Operation;
        const final = await runToEnd(ctx, op, `loading ${app}`);
        const result = final.result as { loaded?: boolean; slot?: number; dpu?: { fingerprint: string } | null };
        ctx.result(final, () => say(result.loaded === false ? `${app} was active already.` : `${app} is loaded in slot ${result.slot ?? 0}${result.dpu ? `; DPU ${result.dpu.fingerprint}` : ''}.`));
      }),
    );
  apps
    .command('unload')
    .description('unload the active app')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }) => {
        const op = (await ctx.api.call(ctx.api.client.POST('/api/apps/unload/', { body: { board_id: await boardIdOf(ctx.api, opts.board) }, params: { header: { prefer: 'respond-async' } } }))) as Operation;
        const final = await runToEnd(ctx, op, 'unloading');
        const unloaded = (final.result as { unloaded?: string[] }).unloaded ?? [];
        ctx.result(final, () => say(unloaded.length ? `Unloaded ${unloaded.join(', ')}.` : 'No app was active.'));
      }),
    );
  apps
    .command('install <archive>')
    .description('install an app from a .tar, .tar.gz or .zip of one app folder (shell.json, *.bit.bin, *.dtbo)')
    .option('--board <board>', "the board's name or id")
    .action(
      withContext(async (ctx, opts: { board?: string }, archive: string) => {
        const { form, name, size } = await archiveForm(ctx.api, archive, opts.board);
        ctx.progress.note(`uploading ${name} (${size} bytes)`);
        const op = (await ctx.api.call(
          ctx.api.client.POST('/api/apps/install/', { body: form as unknown as AppInstallForm, params: { header: { prefer: 'respond-async' } } }),
        )) as Operation;
        const final = await runToEnd(ctx, op, `installing ${name}`);
        const result = final.result as { app: string; listed: boolean; board_id: string };
        ctx.result(final, () => say(`Installed ${result.app} on board ${result.board_id}${result.listed ? '' : ' (the board does not list it yet)'}.`));
      }),
    );
}
