import type { Logger } from '../logger.ts';
import { openUploadStream } from '../pac/upload-stream.ts';
import { RpcError, type RpcRegistry } from '../rpc/rpc-registry.ts';
import type { AcceleratorTools } from './accelerator-tools.ts';
import { AppArchiveError, AppError } from './app-errors.ts';

/**
 * The app methods (rpc.ts `app.query`, `app.load`, `app.unload`, `app.install`) on the
 * board's accelerator tools. `changed` runs after each change (the facts follow).
 */
export function registerAppMethods(rpc: RpcRegistry, tools: AcceleratorTools, opts: { log: Logger; changed: () => void }): void {
  const log = opts.log.child({ component: 'apps' });
  rpc
    .register('app.query', async () => asRpcErrors(() => tools.query()))
    .register('app.load', async ({ app }) => {
      try {
        const answer = await asRpcErrors(() => tools.load(app, (text) => log.debug({ app }, text.trimEnd())));
        log.info({ app, loaded: answer.loaded, slot: answer.slot, dpu: answer.dpu?.fingerprint ?? null }, 'app load');
        return answer;
      } finally {
        opts.changed();
      }
    })
    .register('app.unload', async () => {
      try {
        return await asRpcErrors(() => tools.unload());
      } finally {
        opts.changed();
      }
    })
    .register('app.install', async ({ upload_id }, ctx) => {
      try {
        const answer = await asRpcErrors(() => tools.install(openUploadStream(upload_id, ctx)));
        log.info({ app: answer.app, files: answer.files, bytes: answer.bytes, listed: answer.listed }, 'app installed');
        return answer;
      } finally {
        opts.changed();
      }
    });
}

/** The accelerator pieces' typed errors → RpcError with the same code (others pass through). */
export async function asRpcErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError || err instanceof AppArchiveError) throw new RpcError(err.code, err.message);
    throw err;
  }
}
