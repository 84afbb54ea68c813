import { formatLabels } from '@mm/api-client';
import { useState } from 'preact/hooks';
import { client, unwrap, type Board, type Schemas } from '../api/client.ts';
import type { Bounds, HealthCheck } from '../lib/health-verdict.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from './error-box.tsx';
import { parseSelector } from './run-on-boards.tsx';
import { SelectorHint } from './selector-hint.tsx';

type Unit = 'min' | 'h' | 'd';
const UNIT_S: Record<Unit, number> = { min: 60, h: 3600, d: 86_400 };

/** 5400 → [90, 'min'], 7200 → [2, 'h']: the largest unit that divides it. */
function splitInterval(s: number): [number, Unit] {
  if (s % 86_400 === 0) return [s / 86_400, 'd'];
  if (s % 3600 === 0) return [s / 3600, 'h'];
  return [Math.max(1, Math.round(s / 60)), 'min'];
}

interface MetricRow {
  name: string;
  min: string;
  max: string;
}

function rowsOf(expect: HealthCheck['expect'] | undefined): MetricRow[] {
  return Object.entries(expect?.metrics ?? {}).map(([name, b]) => ({ name, min: b.min === undefined ? '' : String(b.min), max: b.max === undefined ? '' : String(b.max) }));
}

/** The rows as the API's `expect`; a problem in words when one is not right (checked before sending). */
function expectOf(rows: MetricRow[]): { expect: { metrics: Record<string, Bounds> } } | { problem: string } {
  const metrics: Record<string, Bounds> = {};
  for (const r of rows) {
    const name = r.name.trim();
    if (!name && !r.min.trim() && !r.max.trim()) continue;
    if (!/^[a-z][a-z0-9_]*$/.test(name)) return { problem: `${name || '(no name)'}: a metric name is a-z, 0-9 and _, starting with a letter (fps, latency_ms).` };
    if (metrics[name]) return { problem: `${name}: each metric once.` };
    const b: Bounds = {};
    for (const side of ['min', 'max'] as const) {
      const t = r[side].trim();
      if (!t) continue;
      const n = Number(t);
      if (!Number.isFinite(n)) return { problem: `${name}: “${t}” is not a number.` };
      b[side] = n;
    }
    if (b.min === undefined && b.max === undefined) return { problem: `${name}: give at least or at most (or remove the row).` };
    if (b.min !== undefined && b.max !== undefined && b.min > b.max) return { problem: `${name}: “at least” is above “at most”.` };
    metrics[name] = b;
  }
  return { expect: { metrics } };
}

/**
 * Creates or edits a health check: its name, the invocation it runs, the boards (a label
 * selector, checked against the fleet as it is typed), how often, and the metric bounds a run
 * must meet. `initial` fills it (editing, or "a check for this board" from a board's page).
 */
export function HealthCheckForm({
  initial,
  boards,
  title,
  submitLabel,
  onSaved,
  onCancel,
}: {
  initial: Partial<HealthCheck> & { id?: number };
  boards: Board[] | null;
  title: string;
  submitLabel: string;
  onSaved: (check: HealthCheck) => void;
  onCancel: () => void;
}) {
  const invocations = useResource(() => unwrap(client.GET('/api/invocations/', { params: { query: { limit: 200 } } })), []);
  const [name, setName] = useState(initial.name ?? '');
  const [invocationId, setInvocationId] = useState(initial.invocation_id ? String(initial.invocation_id) : '');
  const [selectorText, setSelectorText] = useState(formatLabels(initial.board_selector ?? {}));
  const [every, setEvery] = useState(() => splitInterval(initial.interval_s ?? 3600));
  const [rows, setRows] = useState<MetricRow[]>(() => rowsOf(initial.expect));
  const [problem, setProblem] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const selector = parseSelector(selectorText);
  const list = invocations.data?.invocations ?? [];
  const known = invocationId && !list.some((i) => String(i.id) === invocationId);
  const setRow = (i: number, part: keyof MetricRow, v: string) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, [part]: v } : r)));

  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    if (!selector) return setProblem('Write each label as key=value, separated by commas.');
    if (!invocationId) return setProblem('Choose the invocation the check runs.');
    const seconds = every[0] * UNIT_S[every[1]];
    if (!Number.isInteger(every[0]) || seconds < 60) return setProblem('A check runs at most once a minute: give at least 1 min.');
    const ex = expectOf(rows);
    if ('problem' in ex) return setProblem(ex.problem);
    setProblem('');
    const body: Schemas['HealthCheckInput'] = { name: name.trim(), invocation_id: Number(invocationId), board_selector: selector, interval_s: seconds, expect: ex.expect };
    setBusy(true);
    try {
      const saved =
        initial.id === undefined
          ? await unwrap(client.POST('/api/health-checks/', { body }))
          : await unwrap(client.PATCH('/api/health-checks/{id}/', { params: { path: { id: initial.id } }, body }));
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card stack" aria-label={title} onSubmit={submit} data-testid="health-check-form">
      <h2 class="form-title">{title}</h2>
      <div class="row wrap align-end">
        <label class="grow">
          Name
          <input name="name" required maxLength={200} value={name} placeholder="camera smoke test" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label class="grow">
          Invocation it runs
          <select name="invocation" required value={invocationId} onChange={(e) => setInvocationId((e.target as HTMLSelectElement).value)}>
            <option value="">Choose an invocation…</option>
            {known && <option value={invocationId}>#{invocationId}</option>}
            {list.map((i) => (
              <option key={i.id} value={String(i.id)}>
                {i.name} (#{i.id})
              </option>
            ))}
          </select>
        </label>
      </div>
      <div class="row wrap align-end">
        <label class="grow">
          <span>
            Boards with the labels <span class="muted small">(k=v, comma-separated; empty: every board)</span>
          </span>
          <input name="selector" value={selectorText} placeholder="site=lab-1, camera=yes" aria-invalid={selector === null} onInput={(e) => setSelectorText((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Every
          <span class="row">
            <input
              name="every"
              type="number"
              min={1}
              step={1}
              required
              value={every[0]}
              style={{ width: '5.5rem' }}
              aria-label="Every (number)"
              onInput={(e) => setEvery([Math.round(Number((e.target as HTMLInputElement).value)), every[1]])}
            />
            <select aria-label="Every (unit)" value={every[1]} onChange={(e) => setEvery([every[0], (e.target as HTMLSelectElement).value as Unit])}>
              <option value="min">minutes</option>
              <option value="h">hours</option>
              <option value="d">days</option>
            </select>
          </span>
        </label>
      </div>
      {selector ? <SelectorHint selector={selector} boards={boards} onUse={(s) => setSelectorText(formatLabels(s))} testId="check-selector-hint" /> : <p class="small error-text">Write each label as key=value.</p>}
      <fieldset class="metric-bounds">
        <legend>A run passes when it succeeds{rows.length > 0 ? ' and these metrics are within bounds' : ''}</legend>
        {rows.map((r, i) => (
          <div class="row wrap align-end" key={i}>
            <label>
              Metric
              <input value={r.name} size={14} placeholder="fps" onInput={(e) => setRow(i, 'name', (e.target as HTMLInputElement).value)} />
            </label>
            <label>
              At least
              <input value={r.min} inputMode="decimal" size={7} onInput={(e) => setRow(i, 'min', (e.target as HTMLInputElement).value)} />
            </label>
            <label>
              At most
              <input value={r.max} inputMode="decimal" size={7} onInput={(e) => setRow(i, 'max', (e.target as HTMLInputElement).value)} />
            </label>
            <button type="button" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}>
              Remove <span class="visually-hidden">metric {r.name}</span>
            </button>
          </div>
        ))}
        <div>
          <button type="button" onClick={() => setRows((rs) => [...rs, { name: '', min: '', max: '' }])}>
            Add a metric bound
          </button>
        </div>
      </fieldset>
      {problem && (
        <p class="error-text small" role="alert">
          {problem}
        </p>
      )}
      <ErrorBox error={error ?? invocations.error} onDismiss={() => setError(null)} />
      <div class="row wrap">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

