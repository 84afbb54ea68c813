import { useState } from 'preact/hooks';
import { client, unwrap } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { formatBytes } from '../lib/format.ts';
import { sha256OfFile } from '../lib/sha256.ts';
import { navigate } from '../lib/router.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { ErrorBox } from './error-box.tsx';
import { useBoards } from './board-picker.tsx';
import { checkSelector, SelectorHint } from './selector-hint.tsx';

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

type Kind = 'execute' | 'pac_activate' | 'pac_install' | 'script_deploy' | 'agent_update' | 'app_install' | 'app_load';

/**
 * A rollout started from the page of what it applies ("Run on boards…" on an invocation,
 * "Roll out…" on a PAC or a device script): the boards by label (none: every board), phases,
 * the automatic abort; on success, the rollout's page. One line mounts it. A `pac_install`
 * without `params` asks for the archive file: hashed here, uploaded (resumably, on its own)
 * only when the server lacks it, then named by sha256.
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
  const [archive, setArchive] = useState<File | null>(null);
  const [step, setStep] = useState('');
  const [refused, setRefused] = useState('');
  // The fleet, to check the labels before anything is hashed, uploaded or created (asked when the form opens).
  const { boards } = useBoards(0, open);
  const picksArchive = (props.kind === 'pac_install' || props.kind === 'app_install') && !props.params;
  const allowed = props.kind === 'execute' ? canOperate.value : isAdmin.value;
  if (!allowed) return null;
  const title = props.label ?? (props.kind === 'execute' ? 'Run on boards…' : 'Roll out…');
  const selector = parseSelector(labels);

  async function submit(e: Event) {
    e.preventDefault();
    if (!selector || (picksArchive && !archive)) return;
    // No registered board has these labels: refuse here, before an archive is hashed or sent
    // and before a rollout is created (the hint under the field names the nearest label).
    if (boards && checkSelector(selector, boards).matching.length === 0) return setRefused('No board carries these labels: nothing was sent. Correct them (see above) and start again.');
    setRefused('');
    setBusy(true);
    setError(null);
    try {
      let params = props.params;
      if (picksArchive && archive) {
        setStep(`hashing ${archive.name}…`);
        const sha256 = await sha256OfFile(archive, (n) => setStep(`hashing ${archive.name}: ${Math.floor((100 * n) / Math.max(1, archive.size))}%`));
        params = { archive_sha256: sha256, filename: archive.name };
      }
      const create = () =>
        unwrap(
          client.POST('/api/rollouts/', {
            body: {
              kind: props.kind,
              board_selector: selector,
              ...(props.invocationId !== undefined ? { invocation_id: props.invocationId } : {}),
              ...(params ? { params } : {}),
            ...(batch ? { batch_size: Number(batch) } : {}),
            ...(interval ? { batch_interval_s: Number(interval) } : {}),
              ...(abortPercent && abortMin ? { abort: { failure_percent: Number(abortPercent), min_finished: Number(abortMin) } } : {}),
            },
          }),
        );
      let r;
      try {
        r = await create();
      } catch (err) {
        // The server lacks the archive: send it once, then ask again.
        if (!(picksArchive && archive && params && err instanceof ApiProblem && err.code === 'content_not_found')) throw err;
        // Loaded on demand, as the file slots do: tus stays out of the first bundle.
        const { uploadContent } = await import('../lib/upload.ts');
        await uploadContent(archive, String(params.archive_sha256), (n) => setStep(`uploading ${archive.name}: ${formatBytes(n)} of ${formatBytes(archive.size)}`));
        setStep('starting the rollout…');
        r = await create();
      }
      navigate(`/rollouts/${r.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      setStep('');
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
      {picksArchive && (
        <label>
          PAC archive <span class="muted small">(.tar or .tar.gz; sent only if the server lacks it)</span>
          <input type="file" name="archive" accept=".tar,.gz,.tgz,application/gzip,application/x-tar" onChange={(e) => setArchive((e.target as HTMLInputElement).files?.[0] ?? null)} />
        </label>
      )}
      <label>
        Boards with the labels <span class="muted small">(k=v, comma-separated; empty: every board)</span>
        <input name="labels" value={labels} placeholder="mm/board-model=kv260, camera=yes" onInput={(e) => {
            setLabels((e.target as HTMLInputElement).value);
            setRefused('');
          }} aria-invalid={selector === null} />
      </label>
      {selector === null ? (
        <p class="small danger-text">Write each label as key=value.</p>
      ) : (
        <SelectorHint
          selector={selector}
          boards={boards}
          testId="rollout-selector-hint"
          onUse={(s) => {
            setLabels(Object.entries(s).map(([k, v]) => `${k}=${v}`).join(', '));
            setRefused('');
          }}
        />
      )}
      <div class="row wrap align-end">
        <label>
          Boards per phase <span class="muted small">(empty: all at once)</span>
          <input inputMode="numeric" size={5} value={batch} onInput={(e) => setBatch((e.target as HTMLInputElement).value.replace(/\D/g, ''))} />
        </label>
        <label>
          Seconds between phases
          <input inputMode="numeric" size={5} value={interval} onInput={(e) => setInterval((e.target as HTMLInputElement).value.replace(/\D/g, ''))} />
        </label>
      </div>
      <div class="row wrap align-end">
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
        <button type="submit" class="primary" disabled={busy || selector === null || (picksArchive && !archive)}>
          Start
        </button>
        {step && (
          <span class="muted small" role="status">
            {step}
          </span>
        )}
        <button type="button" onClick={() => setOpen(false)} disabled={busy}>
          Close
        </button>
      </div>
      {refused && (
        <p class="small error-text" role="alert" data-testid="rollout-refused">
          {refused}
        </p>
      )}
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </form>
  );
}
