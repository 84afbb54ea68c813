import { StreamError, type OperationOutcome } from '@mm/protocol';
import type { BoardLink } from '../agent-link/board-link.ts';
import { isDatabaseUnavailable } from '../db/pg-error.ts';
import { attachOperationFile, resultsUrl, type RunResultsRecord } from '../invocations/run-results.ts';
import type { StoreContext } from '../store-context.ts';
import type { OutputReceiver } from './output-receiver.ts';

/**
 * An execute's second produced file, the runner's results.jsonl (docs/runner.md): pulled
 * from the agent's cache by its sha256 the way the output video is (output-receiver.ts), and
 * kept with the operation (operation_files). Answers `result.results`: its record, or null
 * when it could not be received (the run still succeeds, the log says why); `link_closed`
 * when the link went meanwhile (the outcome is then not acknowledged: the agent reports it
 * again and the pull happens then).
 */
export async function receiveRunResults(
  deps: { ctx: StoreContext; output: OutputReceiver; note(opId: number, text: string): Promise<void> },
  conn: BoardLink,
  opId: number,
  invocationId: number | null,
  results: NonNullable<OperationOutcome['results']>,
): Promise<RunResultsRecord | null | 'link_closed'> {
  try {
    const stored = await deps.output.receive(conn, opId, undefined, results);
    await attachOperationFile(deps.ctx, opId, 'results', { filename: 'results.jsonl', sha256: stored.sha256, size: stored.size, contentType: 'application/x-ndjson' });
    return { filename: 'results.jsonl', size: stored.size, sha256: stored.sha256, url: resultsUrl(invocationId ?? 0, opId) };
  } catch (err) {
    if (err instanceof StreamError && err.info.code === 'link_closed') return 'link_closed';
    if (isDatabaseUnavailable(err)) throw err;
    await deps.note(opId, `could not receive results.jsonl: ${err instanceof Error ? err.message : String(err)}\n`);
    return null;
  }
}
