import { RunOnBoards } from '../components/run-on-boards.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, unwrap, type Board, type Operation } from '../api/client.ts';
import { BoardOperations } from '../components/board-operations.tsx';
import { BoardFleetPanel } from '../components/board-fleet-panel.tsx';
import { BoardRename } from '../components/board-rename.tsx';
import { BoardIncidents } from '../components/board-incidents.tsx';
import { BoardPower } from '../components/board-power.tsx';
import { BoardTerminalLink } from '../components/board-terminal-link.tsx';
import { BoardStatus, neverConnected } from '../components/board-status.tsx';
import { BoardTelemetry } from '../components/board-telemetry.tsx';
import { BoardScripts } from '../components/board-scripts.tsx';
import { BoardApps } from '../components/board-apps.tsx';
import { ConfirmButton } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { DataTable } from '../components/table-box.tsx';
import { Link } from '../components/link.tsx';
import { OperationLive } from '../components/operation-live.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { ago, formatBytes, formatTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';
import { useBoardPacs } from '../lib/use-board-pacs.ts';
import { postFormWithProgress } from '../lib/xhr-upload.ts';

interface RebootStep {
  text: string;
  state: 'done' | 'waiting' | 'failed';
}

export function BoardPage({ id }: { id: string }) {
  const [activation, setActivation] = useState<{ op: Operation; pac: string; bootId: string | null } | null>(null);
  const [steps, setSteps] = useState<RebootStep[]>([]);
  const seen = useRef({ rebooting: false, back: false });

  // Live status: faster while a PAC activation is under way, to see the reboot.
  const boardResource = useResource(() => unwrap(client.GET('/api/boards/{id}/', { params: { path: { id } } })), [id], {
    pollMs: activation ? 700 : 3000,
  });
  const { data: board, error } = boardResource;
  // The last known PACs; the board is asked only when they are stale (or on request), once it is online.
  const online = board?.status === 'online';
  const pacList = useBoardPacs(id, { mayQuery: canOperate.value, online });
  const { error: pacError, setError: setPacError } = pacList;
  const pacs = pacList.stored?.pacs ? { pacs: pacList.stored.pacs } : null;
  const loadPacs = pacList.refresh;

  useEffect(() => track(board), [board]);

  function track(b: Board | null) {
    if (!b || !activation) return;
    const s = seen.current;
    if (b.status === 'rebooting' && !s.rebooting) {
      s.rebooting = true;
      setSteps((st) => [...st, { text: 'The board is rebooting…', state: 'waiting' }]);
    }
    const bootId = b.boot_id;
    if (s.rebooting && !s.back && b.status === 'online' && bootId && bootId !== activation.bootId) {
      s.back = true;
      setSteps((st) => [
        ...st.map((x) => ({ ...x, state: 'done' as const })),
        { text: `Back online with a new boot id (${bootId.slice(0, 8)}…)`, state: 'done' },
      ]);
    }
  }

  async function activate(pac: string) {
    if (!board) return;
    setPacError(null);
    seen.current = { rebooting: false, back: false };
    setSteps([{ text: `Activating ${pac}: xlnx-config -a, then a reboot`, state: 'waiting' }]);
    try {
      const op = await unwrap(client.POST('/api/pacs/activate/', { params: { header: { prefer: 'respond-async' } }, body: { board_id: id, pac } }));
      setActivation({ op, pac, bootId: board.boot_id });
    } catch (err) {
      setSteps([]);
      setPacError(err);
    }
  }

  function activationEnded(op: Operation) {
    if (!activation) return;
    setSteps((st) => [
      ...st.map((x) => ({ ...x, state: op.status === 'succeeded' ? ('done' as const) : x.state === 'waiting' ? ('failed' as const) : x.state })),
      op.status === 'succeeded'
        ? { text: `${activation.pac} is the active PAC`, state: 'done' }
        : { text: `Activation ${op.status}: ${op.error?.message ?? 'see the operation log'}`, state: 'failed' },
    ]);
    void loadPacs();
    boardResource.reload();
  }

  if (error && !board) return <ErrorBox error={error} />;
  if (!board) return <p aria-busy="true">Loading…</p>;
  return (
    <section aria-labelledby="board-title" class="stack">
      <p>
        <Link href="/boards">← Boards</Link>
      </p>
      <div class="page-head">
        <h1 id="board-title">{board.name}</h1>
        {isAdmin.value && <BoardRename board={board} onRenamed={boardResource.set} />}
        {isAdmin.value && <DeleteBoard id={board.id} name={board.name} />}
      </div>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <BoardStatus board={board} />
        </dd>
        <dt>Last seen</dt>
        <dd>{board.status === 'online' ? 'now' : neverConnected(board) ? 'never' : `${ago(board.last_seen_at)} (${formatTime(board.last_seen_at)})`}</dd>
        <dt>Connected since</dt>
        <dd>{formatTime(board.connected_at)}</dd>
        <dt>Agent version</dt>
        <dd>{board.agent_version ?? '—'}</dd>
        <dt>Host and architecture</dt>
        <dd>
          {board.hostname ?? '—'} · {board.platform ?? '—'}
        </dd>
        <dt>Boot id</dt>
        <dd>
          <code>{board.boot_id ?? '—'}</code>
        </dd>
        <dt>Active PAC</dt>
        <dd data-testid="active-pac">{board.active_pac ?? '—'}</dd>
      </dl>
      <BoardFleetPanel board={board} onChange={boardResource.set} />
      <BoardTerminalLink board={board} />
      <BoardPower board={board} onChange={boardResource.set} />
      <BoardIncidents board={board} />

      {/* The page is a column of sections: more panels (labels, health, scripts) slot in here. */}
      <BoardTelemetry board={board} />
      <BoardScripts boardId={board.id} online={online} />
      <BoardOperations boardId={board.id} />

      <BoardApps boardId={board.id} boardName={board.name} online={online} />
      <h2>PACs</h2>
      {pacList.stored && (pacList.stored.listed_at || pacList.asking || pacList.stored.query_operation_id !== null) && <PacsAge stored={pacList.stored} asking={pacList.asking} />}
      {!canOperate.value && !pacs ? (
        <p class="muted">Listing PACs asks the board, which needs the operator role.</p>
      ) : !online && !pacs ? (
        <p class="muted" data-testid="pacs-offline">
          {neverConnected(board)
            ? 'This board has not connected yet: start its agent (the install command was shown when it was registered). Its PACs are listed here once it is online.'
            : 'The board is not online: its PACs are listed here once it is back.'}
        </p>
      ) : (
        <>
          <ErrorBox error={pacError} onDismiss={() => setPacError(null)} />
          {pacs && (
            <DataTable label="PACs" columns={['Name', 'Board', 'Assets folder', '']}>
              {pacs.pacs.map((p) => (
                <tr key={p.name}>
                  <td>
                    {p.name} {p.active && <StatusBadge status="active" />}
                  </td>
                  <td>{p.board}</td>
                  <td>
                    <code class="small">{p.assets_dir}</code>
                  </td>
                  <td>
                    {isAdmin.value && !p.active && (
                      <ConfirmButton
                        primary
                        label={`Activate ${p.name}`}
                        question={`Activate ${p.name} on ${board.name}? The board reboots: whatever runs on it stops, and it is offline for a while.`}
                        yes="Yes, activate and reboot"
                        disabled={!!activation && steps.some((s) => s.state === 'waiting')}
                        action={() => activate(p.name)}
                      />
                    )}
                    <RunOnBoards kind="pac_activate" params={{ pac: p.name }} label={`Roll out ${p.name}…`} />
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          {canOperate.value && online && (
            <div class="row">
              <button type="button" onClick={() => void loadPacs()} disabled={pacList.asking || pacList.stored?.query_operation_id != null}>
                Refresh the list
              </button>
            </div>
          )}
          {steps.length > 0 && (
            <div class="card stack" aria-live="polite" data-testid="reboot-view">
              <h3>PAC activation</h3>
              <ol class="steps">
                {steps.map((s, i) => (
                  <li key={i} class={`step-${s.state}`}>
                    <span aria-hidden="true">{s.state === 'done' ? '✓' : s.state === 'failed' ? '✗' : '…'}</span> {s.text}
                  </li>
                ))}
              </ol>
              {activation && <OperationLive key={activation.op.id} operation={activation.op} onEnd={activationEnded} />}
            </div>
          )}
          {isAdmin.value && <InstallPac boardId={board.id} onDone={() => void loadPacs()} />}
        </>
      )}
    </section>
  );
}

/** How old the shown list is, and whether it is being asked again. */
function PacsAge({ stored, asking }: { stored: NonNullable<ReturnType<typeof useBoardPacs>['stored']>; asking: boolean }) {
  const pending = asking || stored.query_operation_id !== null;
  return (
    <p class="small muted" data-testid="pacs-age" aria-live="polite">
      {stored.listed_at ? `Listed ${ago(stored.listed_at)} (${formatTime(stored.listed_at)})` : 'Never listed'}
      {stored.stale && stored.listed_at && ` · out of date: ${stored.stale_reason}`}
      {pending && (
        <>
          {' · asking the board… '}
          {stored.query_operation_id !== null && <Link href={`/operations/${stored.query_operation_id}`}>operation #{stored.query_operation_id}</Link>}
        </>
      )}
    </p>
  );
}

function InstallPac({ boardId, onDone }: { boardId: string; onDone: () => void }) {
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  return (
    <form
      class="card stack"
      aria-label="Install a PAC"
      onSubmit={async (e) => {
        e.preventDefault();
        const formEl = e.currentTarget;
        const file = (formEl.elements.namedItem('file') as HTMLInputElement).files?.[0];
        if (!file) return;
        const form = new FormData();
        form.append('board_id', boardId);
        form.append('file', file);
        setError(null);
        setDone(null);
        setProgress({ loaded: 0, total: file.size });
        try {
          const r = await postFormWithProgress<{ pac: string }>('/api/pacs/install/', form, (loaded, total) => setProgress({ loaded, total }));
          setDone(r.pac);
          formEl.reset();
          onDone();
        } catch (err) {
          setError(err);
        } finally {
          setProgress(null);
        }
      }}
    >
      <h3>Install a PAC</h3>
      <label>
        <span>
          Archive (<code>.tar</code> or <code>.tar.gz</code> of one PAC folder)
        </span>
        <input name="file" type="file" accept=".tar,.tar.gz,.tgz,application/x-tar,application/gzip" required />
      </label>
      {progress && (
        <div>
          <progress max={progress.total || 1} value={progress.loaded} aria-label="PAC upload progress" /> {formatBytes(progress.loaded)} of{' '}
          {formatBytes(progress.total)}
          {progress.loaded >= progress.total && ' — the board is unpacking it…'}
        </div>
      )}
      {done && <p class="ok">Installed {done}.</p>}
      <ErrorBox error={error} />
      <div>
        <button type="submit" disabled={!!progress}>
          Install
        </button>
      </div>
    </form>
  );
}

function DeleteBoard({ id, name }: { id: string; name: string }) {
  return (
    <ConfirmButton
      label="Delete board"
      question={`Delete the board “${name}”? Its token stops working and its agent is disconnected.`}
      yes="Yes, delete"
      action={async () => {
        await unwrap(client.DELETE('/api/boards/{id}/', { params: { path: { id } } }));
        navigate('/boards');
      }}
    />
  );
}
