import { useState } from 'preact/hooks';
import { client, unwrap, type Operation, type Schemas } from '../api/client.ts';
import { formatBytes, formatTime } from '../lib/format.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';
import { postFormWithProgress } from '../lib/xhr-upload.ts';
import { ConfirmButton } from './confirm.tsx';
import { ErrorBox } from './error-box.tsx';
import { OperationLive } from './operation-live.tsx';
import { RunOnBoards } from './run-on-boards.tsx';
import { StatusBadge } from './status-badge.tsx';
import { DataTable } from './table-box.tsx';

type BoardApps = Schemas['BoardApps'];

/**
 * The board page's accelerated applications (docs/accelerators.md), beside its PACs: the
 * board's DPU, its apps as it last reported them (polled), load and unload for operators
 * (an operation, followed live: what holds the slot is unloaded, the app loaded and verified,
 * no reboot), install for admins.
 */
export function BoardApps({ boardId, boardName, online }: { boardId: string; boardName: string; online: boolean }) {
  // Without `refresh` the answer is always the last report (never a 202 with an operation).
  const { data, error, reload, set } = useResource<BoardApps>(() => unwrap(client.GET('/api/boards/{id}/apps/', { params: { path: { id: boardId } } })) as Promise<BoardApps>, [boardId], { pollMs: 5000 });
  const [running, setRunning] = useState<{ op: Operation; label: string } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [refreshing, setRefreshing] = useState(false);
  const busy = !!running && (running.op.status === 'queued' || running.op.status === 'running');

  async function start(label: string, call: () => Promise<Operation>) {
    setActionError(null);
    try {
      setRunning({ op: await call(), label });
    } catch (err) {
      setActionError(err);
    }
  }
  const load = (app: string) =>
    start(`Load ${app}`, () => unwrap(client.POST('/api/apps/load/', { params: { header: { prefer: 'respond-async' } }, body: { board_id: boardId, app } })) as Promise<Operation>);
  const unload = () => start('Unload', () => unwrap(client.POST('/api/apps/unload/', { params: { header: { prefer: 'respond-async' } }, body: { board_id: boardId } })) as Promise<Operation>);

  async function refresh() {
    setRefreshing(true);
    setActionError(null);
    try {
      const answer = await unwrap(client.GET('/api/boards/{id}/apps/', { params: { path: { id: boardId }, query: { refresh: '1' } } }));
      // 200 is the answer; a 202 (still running after MM_SYNC_WAIT_S) carries the operation: the poll picks it up.
      if ('apps' in answer) set(answer);
    } catch (err) {
      setActionError(err);
    } finally {
      setRefreshing(false);
    }
  }

  const apps = data?.apps ?? null;
  return (
    <div class="stack" data-testid="board-apps">
      <h2>Accelerated applications</h2>
      <ErrorBox error={error && !data ? error : null} />
      {data && <DpuSummary apps={data} />}
      {apps && apps.length === 0 && (
        <p class="muted">{data?.reported_at ? 'The board lists no accelerated application.' : 'The board has not reported any accelerator tools (dfx-mgr-client, xmutil, xdputil).'}</p>
      )}
      {apps && apps.length > 0 && !online && <p class="muted small">The board is offline: these are the apps it last reported.</p>}
      {apps && apps.length > 0 && (
        <DataTable label="Accelerated applications on this board" columns={['App', 'Type', 'State', 'DPU fingerprint', '']}>
          {apps.map((a) => (
            <tr key={a.name} data-app={a.name}>
              <td>{a.name}</td>
              <td>
                <code class="small nowrap">{a.type}</code>
              </td>
              <td class="nowrap">{a.active ? <><StatusBadge status="active" /> <span class="small muted">slot {a.slot ?? 0}</span></> : <span class="muted">—</span>}</td>
              <td>
                <code class="small nowrap">{a.dpu_fingerprint ?? '—'}</code>
              </td>
              <td class="row wrap">
                {canOperate.value && online && !a.active && (
                  <ConfirmButton
                    primary
                    label={
                      <>
                        Load<span class="visually-hidden"> {a.name}</span>
                      </>
                    }
                    question={`Load ${a.name} on ${boardName}? ${data?.active ? `${data.active} is unloaded first; whatever uses it stops.` : 'The FPGA is reprogrammed (no reboot).'}`}
                    yes="Yes, load it"
                    disabled={busy}
                    action={() => load(a.name)}
                  />
                )}
                {canOperate.value && online && a.active && (
                  <ConfirmButton
                    label={
                      <>
                        Unload<span class="visually-hidden"> {a.name}</span>
                      </>
                    }
                    question={`Unload ${a.name} from ${boardName}? Whatever uses it stops.`} yes="Yes, unload" disabled={busy} action={unload} />
                )}
                {isAdmin.value && <RunOnBoards kind="app_load" params={{ app: a.name }} label={`Roll out ${a.name}…`} />}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorBox error={actionError} onDismiss={() => setActionError(null)} />
      {canOperate.value && online && (
        <div class="row">
          <button type="button" onClick={() => void refresh()} disabled={refreshing} aria-busy={refreshing}>
            Ask the board again
          </button>
          {data?.reported_at && <span class="small muted">Last reported {formatTime(data.reported_at)}</span>}
        </div>
      )}
      {running && (
        <div class="card stack" aria-live="polite" data-testid="app-operation">
          <h3>{running.label}</h3>
          <OperationLive
            key={running.op.id}
            operation={running.op}
            onEnd={(op) => {
              setRunning({ ...running, op });
              reload();
            }}
          />
        </div>
      )}
      {isAdmin.value && online && <InstallApp boardId={boardId} onStarted={(op) => setRunning({ op, label: 'Install an app' })} />}
    </div>
  );
}

/** The board's DPU as xdputil reports it, the Vitis AI version and what vart.conf points at. */
function DpuSummary({ apps }: { apps: BoardApps }) {
  if (!apps.dpu && !apps.vai_version && !apps.vart_target) {
    return apps.reported_at ? <p class="muted small" data-testid="board-dpu">No DPU reported (no xdputil on the board, or no DPU in the active app).</p> : null;
  }
  return (
    <dl class="facts" data-testid="board-dpu">
      <dt>DPU</dt>
      <dd>{apps.dpu ? `${apps.dpu.arch}${apps.dpu.cores > 1 ? ` × ${apps.dpu.cores}` : ''}${apps.dpu.frequency_mhz ? ` at ${apps.dpu.frequency_mhz} MHz` : ''}` : '—'}</dd>
      <dt>DPU fingerprint</dt>
      <dd>
        <code>{apps.dpu?.fingerprint ?? '—'}</code>
      </dd>
      <dt>Vitis AI</dt>
      <dd>{apps.vai_version ?? '—'}</dd>
      <dt>vart.conf</dt>
      <dd>
        <code class="small">{apps.vart_target ?? '—'}</code>
      </dd>
    </dl>
  );
}

function InstallApp({ boardId, onStarted }: { boardId: string; onStarted: (op: Operation) => void }) {
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="card stack"
      aria-label="Install an accelerated application"
      onSubmit={async (e) => {
        e.preventDefault();
        const formEl = e.currentTarget;
        const file = (formEl.elements.namedItem('file') as HTMLInputElement).files?.[0];
        if (!file) return;
        const form = new FormData();
        form.append('board_id', boardId);
        form.append('file', file);
        setError(null);
        setProgress({ loaded: 0, total: file.size });
        try {
          // Answered with the operation once the install has ended (or, still running after MM_SYNC_WAIT_S, as it is).
          const op = await postFormWithProgress<Operation>('/api/apps/install/', form, (loaded, total) => setProgress({ loaded, total }));
          onStarted(op);
          formEl.reset();
        } catch (err) {
          setError(err);
        } finally {
          setProgress(null);
        }
      }}
    >
      <h3>Install an accelerated application</h3>
      <label>
        <span>
          Archive (<code>.tar</code>, <code>.tar.gz</code> or <code>.zip</code> of one app folder: <code>shell.json</code>, <code>*.bit.bin</code>,{' '}
          <code>*.dtbo</code>)
        </span>
        <input name="file" type="file" accept=".tar,.tar.gz,.tgz,.zip,application/x-tar,application/gzip,application/zip" required />
      </label>
      {progress && (
        <div>
          <progress max={progress.total || 1} value={progress.loaded} aria-label="App upload progress" /> {formatBytes(progress.loaded)} of {formatBytes(progress.total)}
          {progress.loaded >= progress.total && ' — the board is checking and installing it…'}
        </div>
      )}
      <ErrorBox error={error} />
      <div>
        <button type="submit" disabled={!!progress}>
          Install
        </button>
      </div>
    </form>
  );
}
