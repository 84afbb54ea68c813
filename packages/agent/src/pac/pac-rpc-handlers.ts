import type { Readable } from 'node:stream';
import { RpcError, type RpcContext, type RpcHandler } from '../rpc/rpc-registry.ts';
import { installPacArchive } from './pac-archive.ts';
import { PacArchiveError, XlnxConfigError } from './pac-errors.ts';
import { activatePac, queryPacs, type XlnxConfigOptions } from './xlnx-config.ts';

/** What the PAC handlers need of the agent's config. */
export interface PacHandlerOptions extends XlnxConfigOptions {
  /** MM_PAC_DIR. */
  pacDir: string;
}

/**
 * Opens the bytes of an upload the server holds for an RPC (a `stream.pull` of source
 * `{ kind: 'upload', upload_id }` over the request's connection) as a Readable.
 */
export type OpenUpload = (uploadId: string, ctx: RpcContext) => Promise<Readable>;

/** Longest command output carried in an RPC error message. */
const MAX_OUTPUT_IN_ERROR = 16_000;

/** `pac.query`: runs `xlnx-config -q`. */
export function pacQueryHandler(options: PacHandlerOptions): RpcHandler<'pac.query'> {
  return async () => asRpcErrors(() => queryPacs(options));
}

/**
 * `pac.activate`: refuses a name the query does not list (`pac_not_found`, the board left
 * untouched), then runs `xlnx-config -a <pac>`. It does not reboot: the server calls
 * `board.reboot` next.
 */
export function pacActivateHandler(options: PacHandlerOptions): RpcHandler<'pac.activate'> {
  return async ({ pac }) =>
    asRpcErrors(async () => {
      const { pacs } = await queryPacs(options);
      if (!pacs.some((record) => record.name === pac)) {
        const present = pacs.length > 0 ? pacs.map((record) => record.name).join(', ') : 'none';
        throw new RpcError('pac_not_found', `no PAC configuration named ${JSON.stringify(pac)} on this board (present: ${present})`);
      }
      return activatePac(pac, options);
    });
}

/** `pac.install`: pulls the archive, installs it safely under MM_PAC_DIR, queries again. */
export function pacInstallHandler(options: PacHandlerOptions, openUpload: OpenUpload): RpcHandler<'pac.install'> {
  return async ({ upload_id }, ctx) =>
    asRpcErrors(async () => {
      const source = await openUpload(upload_id, ctx);
      const installed = await installPacArchive(source, { pacDir: options.pacDir });
      ctx.log.info({ pac: installed.pac, files: installed.files, bytes: installed.bytes }, 'PAC installed');
      const { pacs, active } = await queryPacs(options);
      return { pac: installed.pac, pacs, active };
    });
}

/**
 * The active PAC's name for `hello.active_pac` (Board.activePac): null when none is active,
 * and also when xlnx-config cannot tell (not installed, failing): a hello must not fail on it.
 */
export async function readActivePac(options: XlnxConfigOptions): Promise<string | null> {
  try {
    return (await queryPacs(options)).active;
  } catch (err) {
    if (err instanceof XlnxConfigError) return null;
    throw err;
  }
}

/** The PAC pieces' typed errors → RpcError with the same code (others pass through). */
async function asRpcErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof PacArchiveError) throw new RpcError(err.code, err.message);
    if (err instanceof XlnxConfigError) {
      // The whole output (bounded), not only the message's last lines: it is the operation's log.
      const headline = err.message.split('\n')[0] ?? err.message;
      const output = err.output.trim();
      const message = output === '' ? err.message : `${headline}\n${output.slice(-MAX_OUTPUT_IN_ERROR)}`;
      throw new RpcError(err.code, message);
    }
    throw err;
  }
}
