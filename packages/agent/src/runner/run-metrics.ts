import fsp from 'node:fs/promises';
import path from 'node:path';

/** The file a runner may leave in MM_OUTPUT_DIR with its figures. */
export const METRICS_FILE = 'metrics.json';
/** At most this many names… */
export const MAX_METRICS = 64;
/** …each like this… */
const METRIC_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** …in a file of at most this many bytes (more is not read). */
export const MAX_METRICS_BYTES = 16 * 1024;

export type RunnerMetrics =
  | { kind: 'none' }
  | { kind: 'ok'; metrics: Record<string, number> }
  /** `problem` is a line for the operation's log: why the file was ignored. */
  | { kind: 'ignored'; problem: string };

/**
 * Checks the text of a metrics.json: a flat JSON object of at most 64 names
 * (`[a-z][a-z0-9_]*`, up to 64 characters) to finite numbers. Anything else is ignored as a
 * whole, with the reason.
 */
export function parseRunnerMetrics(text: string): RunnerMetrics {
  const ignored = (why: string): RunnerMetrics => ({ kind: 'ignored', problem: `${METRICS_FILE} ignored: ${why}` });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return ignored(`not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return ignored(`it must be a JSON object of names to numbers, not ${Array.isArray(raw) ? 'an array' : raw === null ? 'null' : typeof raw}`);
  const entries = Object.entries(raw);
  if (entries.length > MAX_METRICS) return ignored(`${entries.length} names, at most ${MAX_METRICS} are taken`);
  const metrics: Record<string, number> = {};
  for (const [name, value] of entries) {
    if (!METRIC_NAME.test(name)) return ignored(`the name ${JSON.stringify(name.slice(0, 80))} is not [a-z][a-z0-9_]* (at most 64 characters)`);
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      const shown = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value)).slice(0, 80);
      return ignored(`${name} is ${shown}, not a finite number`);
    }
    metrics[name] = value;
  }
  return { kind: 'ok', metrics };
}

/**
 * Reads the runner's metrics.json from its output folder, reading no more than
 * MAX_METRICS_BYTES (a 10 MB file is refused by its size, a FIFO or device is not opened).
 */
export async function readRunnerMetrics(outputDir: string): Promise<RunnerMetrics> {
  const file = path.join(outputDir, METRICS_FILE);
  let stat;
  try {
    stat = await fsp.lstat(file);
  } catch {
    return { kind: 'none' };
  }
  if (!stat.isFile()) return { kind: 'ignored', problem: `${METRICS_FILE} ignored: not a regular file` };
  if (stat.size > MAX_METRICS_BYTES) return { kind: 'ignored', problem: `${METRICS_FILE} ignored: ${stat.size} bytes, at most ${MAX_METRICS_BYTES} are read` };
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(file, 'r');
    const buf = Buffer.alloc(MAX_METRICS_BYTES + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    // It grew after the lstat: the same rule.
    if (bytesRead > MAX_METRICS_BYTES) return { kind: 'ignored', problem: `${METRICS_FILE} ignored: more than ${MAX_METRICS_BYTES} bytes` };
    return parseRunnerMetrics(buf.subarray(0, bytesRead).toString('utf8'));
  } catch (err) {
    return { kind: 'ignored', problem: `${METRICS_FILE} ignored: could not read it (${err instanceof Error ? err.message : String(err)})` };
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** What is known about a run when its `result.metrics` is made. */
export interface RunFigures {
  /** How long the runner ran, in milliseconds. */
  runMs: number;
  /** The runner's own metrics.json, if it left a valid one. */
  runner: Record<string, number> | undefined;
  /** What the board measured during the run (`max_temperature_c`, `mean_power_w`), where it can. */
  measured?: { max_temperature_c?: number; mean_power_w?: number };
}

/**
 * The execute's `result.metrics`: the runner's names, then the agent's own measurements.
 * `run_ms` is always the agent's. Of the board's figures (`max_temperature_c`,
 * `mean_power_w`, sampled every few seconds over the whole run), a runner's own value wins:
 * mm-runner samples the same sensors many times a second over the inference alone, and its
 * `energy_mj_per_frame` is computed from that window (docs/runner.md, "Figures").
 */
export function buildRunMetrics(figures: RunFigures): Record<string, number> {
  const measured = Object.fromEntries(Object.entries(figures.measured ?? {}).filter(([name]) => figures.runner?.[name] === undefined));
  return { ...figures.runner, run_ms: Math.round(figures.runMs), ...measured };
}
