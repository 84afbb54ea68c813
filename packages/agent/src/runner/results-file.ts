import fsp from 'node:fs/promises';
import path from 'node:path';

/** The runner's per-frame results (docs/runner.md): one JSON object per line. */
export const RESULTS_FILE = 'results.jsonl';
export const RESULTS_CONTENT_TYPE = 'application/x-ndjson';
/** A larger results file is left on the board (a few hundred bytes a frame: hours of video fit). */
export const MAX_RESULTS_BYTES = 512 * 1024 * 1024;

export type ResultsFile = { kind: 'none' } | { kind: 'found'; file: string } | { kind: 'ignored'; problem: string };

/**
 * MM_OUTPUT_DIR/results.jsonl, if the runner left one: a regular file (`lstat`: a symbolic
 * link is not taken) of at most MAX_RESULTS_BYTES. Whoever takes it opens it without
 * following links (ContentCache.importFile does), as the runner may swap it after this look.
 */
export async function findResultsFile(outputDir: string): Promise<ResultsFile> {
  const file = path.join(outputDir, RESULTS_FILE);
  const st = await fsp.lstat(file).catch(() => undefined);
  if (!st) return { kind: 'none' };
  if (!st.isFile()) return { kind: 'ignored', problem: `${RESULTS_FILE} ignored: not a regular file` };
  if (st.size > MAX_RESULTS_BYTES) return { kind: 'ignored', problem: `${RESULTS_FILE} ignored: ${st.size} bytes, at most ${MAX_RESULTS_BYTES} are taken` };
  return { kind: 'found', file };
}
