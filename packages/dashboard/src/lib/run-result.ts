import type { Operation } from '@mm/api-client';

/** One input file of a transfer/execute result. */
export interface ResultFile {
  kind: string;
  filename: string;
  size: number | null;
  cached: boolean | null;
  bytes_pulled: number | null;
  wire_bytes: number | null;
}

/** What a transfer/execute result says, read defensively (any field may be missing). */
export interface RunResult {
  files: ResultFile[];
  filesPulled: number | null;
  filesCached: number | null;
  bytesPulled: number | null;
  wireBytes: number | null;
  exitCode: number | null;
  durationMs: number | null;
  outputVideo: string | null;
  invocationDir: string | null;
  /** `result.metrics`: the runner's metrics.json plus run_ms, max_temperature_c, mean_power_w. */
  metrics: Record<string, number>;
  /** `result.steps` / `result.timings`, where the server reports step times: name → ms. */
  steps: Array<[string, number]>;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** Finite numbers of a flat object (anything else left out). */
export function numberMap(v: unknown): Record<string, number> {
  const o = obj(v);
  if (!o) return {};
  return Object.fromEntries(Object.entries(o).filter((e): e is [string, number] => num(e[1]) !== null));
}

function readSteps(v: unknown): Array<[string, number]> {
  if (Array.isArray(v))
    return v.flatMap((s) => {
      const o = obj(s);
      const name = str(o?.name) ?? str(o?.phase);
      const ms = num(o?.ms) ?? num(o?.duration_ms);
      return name && ms !== null ? [[name, ms] as [string, number]] : [];
    });
  return Object.entries(numberMap(v));
}

export function readRunResult(result: unknown): RunResult | null {
  const r = obj(result);
  if (!r) return null;
  const files = Array.isArray(r.files)
    ? r.files.flatMap((f) => {
        const o = obj(f);
        if (!o) return [];
        return [
          {
            kind: str(o.kind) ?? '',
            filename: str(o.filename) ?? '',
            size: num(o.size),
            cached: typeof o.cached === 'boolean' ? o.cached : null,
            bytes_pulled: num(o.bytes_pulled),
            wire_bytes: num(o.wire_bytes),
          },
        ];
      })
    : [];
  return {
    files,
    filesPulled: num(r.files_pulled),
    filesCached: num(r.files_cached),
    bytesPulled: num(r.bytes_pulled),
    wireBytes: num(r.wire_bytes),
    exitCode: num(r.exit_code),
    durationMs: num(r.duration_ms),
    outputVideo: str(r.output_video) ?? str(obj(r.output_video)?.filename),
    invocationDir: str(r.invocation_dir),
    metrics: numberMap(r.metrics),
    steps: readSteps(r.steps ?? r.timings ?? r.step_ms),
  };
}

/** The metrics of an operation's result ({} when none). */
export function metricsOf(op: Pick<Operation, 'result'>): Record<string, number> {
  return numberMap(obj(op.result)?.metrics);
}

/** How long a run took (or has been running), in words: `42 s`, `3 min 5 s`, `1 h 2 min`. */
export function runDuration(op: Pick<Operation, 'started_at' | 'finished_at'>, now = Date.now()): string {
  if (!op.started_at) return '';
  const ms = (op.finished_at ? new Date(op.finished_at).getTime() : now) - new Date(op.started_at).getTime();
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
