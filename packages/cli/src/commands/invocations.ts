import path from 'node:path';
import type { Command } from 'commander';
import { INPUT_KINDS, type InputKind, type Invocation } from '../api.ts';
import { say } from '../context.ts';
import { downloadFile } from '../download.ts';
import { UsageError } from '../errors.ts';
import { bytes, table, when } from '../format.ts';
import { checkLocalFiles, hashFiles, sendFiles } from '../send-files.ts';
import { positiveId, withContext } from './shared.ts';

export function registerInvocations(program: Command): void {
  const inv = program.command('invocations').alias('inv').description('list, show, delete and download invocations');

  inv
    .command('ls')
    .description('list invocations, newest first')
    .option('--search <q>', 'only names that contain this')
    .option('--limit <n>', 'how many', '100')
    .action(
      withContext(async (ctx, opts: { search?: string; limit: string }) => {
        const page = await ctx.api.call(ctx.api.client.GET('/api/invocations/', { params: { query: { q: opts.search, limit: positiveId(opts.limit, '--limit') } } }));
        ctx.result(page, () => {
          const kinds = (i: Invocation) => Object.entries(i.files).filter(([, f]) => f).map(([k]) => k).join(',');
          say(table(['ID', 'NAME', 'FILES', 'CREATED'], page.invocations.map((i) => [i.id, i.name, kinds(i), when(i.created_at)])));
          if (page.total > page.invocations.length) say(`(${page.invocations.length} of ${page.total})`);
        });
      }),
    );

  inv
    .command('show <id>')
    .description('an invocation with its files and latest operations')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const i = await ctx.api.call(ctx.api.client.GET('/api/invocations/{id}/', { params: { path: { id: positiveId(id, 'invocation id') } } }));
        ctx.result(i, () => {
          say(`Invocation ${i.id}: ${i.name}${i.description ? ` — ${i.description}` : ''}`);
          say(`created ${when(i.created_at)}, updated ${when(i.updated_at)}`);
          say(table(['KIND', 'FILENAME', 'SIZE', 'SHA256'], Object.entries(i.files).map(([k, f]) => [k, f?.filename, f ? bytes(f.size) : '', f?.sha256.slice(0, 16)])));
          if (i.operations?.length) {
            say('');
            say(table(['OP', 'KIND', 'STATUS', 'CREATED'], i.operations.map((o) => [o.id, o.kind, o.status, when(o.created_at)])));
          }
        });
      }),
    );

  inv
    .command('rm <id>')
    .description('delete an invocation (cancels its operations, removes its files)')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        const n = positiveId(id, 'invocation id');
        await ctx.api.call(ctx.api.client.DELETE('/api/invocations/{id}/', { params: { path: { id: n } } }));
        ctx.result({ deleted: n }, () => say(`Deleted invocation ${n}.`));
      }),
    );

  inv
    .command('download <id>')
    .description('download the invocation as a ZIP (its files and invocation.json)')
    .option('-o, --output <zip>', 'where to save it (default: <name>-<id>.zip)')
    .action(
      withContext(async (ctx, opts: { output?: string }, id: string) => {
        const n = positiveId(id, 'invocation id');
        const i = await ctx.api.call(ctx.api.client.GET('/api/invocations/{id}/', { params: { path: { id: n } } }));
        const out = opts.output ?? `${i.name.replace(/[^\w.-]+/g, '-')}-${n}.zip`;
        // A streamed ZIP has no known size or digest: downloaded in one go. Its files are
        // stored as they are, so their sizes are what the bar expects until the end.
        const res = await ctx.api.answer(ctx.api.client.GET('/api/invocations/{id}/download/', { params: { path: { id: n } }, parseAs: 'stream', signal: ctx.signal }));
        const length = Number(res.headers.get('content-length') ?? NaN);
        const bar = Number.isFinite(length)
          ? ctx.progress.bar('downloading zip', length)
          : ctx.progress.bar('downloading zip', Object.values(i.files).reduce((sum, f) => sum + (f?.size ?? 0), 0), { estimated: true });
        const { Readable } = await import('node:stream');
        const { pipeline } = await import('node:stream/promises');
        const fs = await import('node:fs');
        let size = 0;
        await pipeline(
          Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
          async function* (src: AsyncIterable<Uint8Array>) {
            for await (const c of src) {
              size += c.byteLength;
              bar.add(c.byteLength);
              yield c;
            }
          },
          fs.createWriteStream(`${out}.part`),
        );
        await fs.promises.rename(`${out}.part`, out);
        bar.done();
        ctx.result({ invocation_id: n, path: path.resolve(out), size }, () => say(`Saved ${out} (${bytes(size)}).`));
      }),
    );

  program
    .command('upload <id> <kind> <file>')
    .description(`send one file to an invocation, resumably; skipped when the server already holds it (kinds: ${INPUT_KINDS.join(', ')})`)
    .action(
      withContext(async (ctx, _opts, id: string, kind: string, file: string) => {
        const n = positiveId(id, 'invocation id');
        if (!(INPUT_KINDS as readonly string[]).includes(kind)) throw new UsageError(`Unknown kind ${JSON.stringify(kind)}; kinds: ${INPUT_KINDS.join(', ')}.`);
        const files = [{ kind: kind as InputKind, path: file }];
        await checkLocalFiles(files);
        const hashed = await hashFiles(files, ctx.progress, ctx.signal);
        const [sent] = await sendFiles(ctx.api, n, files, hashed, ctx.progress, ctx.signal);
        ctx.result(sent, () => say(`${sent!.action === 'attached' ? 'Attached' : 'Uploaded'} ${sent!.filename} as the ${kind} of invocation ${n} (${bytes(sent!.size)}, sha256 ${sent!.sha256.slice(0, 16)}…).`));
      }),
    );
}
