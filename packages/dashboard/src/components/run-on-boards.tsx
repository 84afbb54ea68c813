import { useState } from 'preact/hooks';
import { client, unwrap } from '../api/client.ts';
import { navigate } from '../lib/router.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { ErrorBox } from './error-box.tsx';

/** `k=v, k2=v2` → `{ k: v, k2: v2 }`; null when a pair is not `key=value`. */
export function parseSelector(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const part of text.split(/[,\n]/).map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

type Kind = 'execute' | 'pac_activate' | 'pac_install' | 'script_deploy' | 'agent_update';

/**
 * A rollout started from the page of what it applies ("Run on boards…" on an invocation,
 * "Roll out…" on a PAC or a device script): the boards by label (none: every board), phases,
 * the automatic abort; on success, the rollout's page. One line mounts it.
 */
export function RunOnBoards(props: { kind: Kind; invocationId?: number; params?: Record<string, unknown>; label?: string }) {
  const [open, setOpen] = useState(false);
  const [labels, setLabels] = useState('');
  const [batch, setBatch] = useState('');
  const [interval, setInterval] = useState('');
  const [abortPercent, setAbortPercent] = useState('');
  const [abortMin, setAbortMin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const allowed = props.kind === 'execute' ? canOperate.value : isAdmin.value;
  if (!allowed) return null;
  const title = props.label ?? (props.kind === 'execute' ? 'Run on boards…' : 'Roll out…');
  const selector = parseSelector(labels);

  async function submit(e: Event) {
    e.preventDefault();
    if (!selector) return;
    setBusy(true);
    setError(null);
    try {
      const r = await unwrap(
        client.POST('/api/rollouts/', {
          body: {
            kind: props.kind,
            board_selector: selector,
            ...(props.invocationId !== undefined ? { invocation_id: props.invocationId } : {}),
            ...(props.params ? { params: props.params } : {}),
            ...(batch ? { batch_size: Number(batch) } : {}),
            ...(interval ? { batch_interval_s: Number(interval) } : {}),
            ...(abortPercent && abortMin ? { abort: { failure_percent: Number(abortPercent), min_finished: Number(abortMin) } } : {}),
          },
        }),
      );
      navigate(`/rollouts/${r.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} data-testid="run-on-boards">
        {title}
      </button>
    );
  }
  return (
    <form class="card stack" aria-label={title} onSubmit={submit} data-testid="run-on-boards-form">
      <strong>{title}</strong>
      <label>
        Boards with the labels <span class="muted small">(k=v, comma-separated; empty: every board)</span>
        <input name="labels" value={labels} placeholder="mm/board-model=kv260, camera=yes" onInput={(e) => setLabels((e.target as HTMLInputElement).value)} aria-invalid={selector === null} />
      </label>
      {selector === null && <p class="small danger-text">Write each label as key=value.</p>}
      <div class="row wrap">
        <label>
          Boards per phase <span class="muted small">(empty: all at once)</span>
          <input inputMode="numeric" size={5} value={batch} onInput={(e) => setBatch((e.target as HTMLInputElement).value.replace(/\D/g, ''))} />
        </label>
        <label>
          Seconds between phases
          <input inputMode="numeric" size={5} value={interval} onInput={(e) => setInterval((e.target as HTMLInputElement).value.replace(/\D/g, ''))} />
        </label>
      </div>
      <div class="row wrap">
        <label>
          Stop when this % failed
          <input inputMode="numeric" size={4} value={abortPercent} onInput={(e) => setAbortPercent((e.target as HTMLInputElement).value.replace(/\D/g, ''))} />
        </label>
        <label>
          …of at least this many finished
          <input inputMode="numeric" size={4} value={abortMin} onInput={(e) => setAbortMin((e.target as HTMLInputElement).value.replace(/\D/g, ''))} />
        </label>
      </div>
      <div class="row">
        <button type="submit" class="primary" disabled={busy || selector === null}>
          Start
        </button>
        <button type="button" onClick={() => setOpen(false)} disabled={busy}>
          Close
        </button>
      </div>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </form>
  );
}
