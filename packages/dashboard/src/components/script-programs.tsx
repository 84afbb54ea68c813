import { useState } from 'preact/hooks';
import { currentQuery } from '../lib/router.ts';
import { client, unwrap, type DeviceScript, type Operation } from '../api/client.ts';
import { BoardPicker, useBoards } from './board-picker.tsx';
import { ErrorBox } from './error-box.tsx';
import { Link } from './link.tsx';
import { OperationLive } from './operation-live.tsx';
import { DataTable } from './table-box.tsx';
import { ago, formatBytes, formatTime } from '../lib/format.ts';
import { isAdmin } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';
import { postFormWithProgress } from '../lib/xhr-upload.ts';

const getPrograms = (id: string) => unwrap(client.GET('/api/device-scripts/{id}/programs/', { params: { path: { id } } }));

/** The catalogue list's "Runs on" cell: each board the script is deployed on, with its version and state. */
export function ScriptRunsOn({ id }: { id: string }) {
  const { data } = useResource(() => getPrograms(id), [id], { pollMs: 10_000 });
  if (!data) return <span class="muted">…</span>;
  if (data.deployments.length === 0) return <span class="muted">nowhere yet</span>;
  return (
    <ul class="plain small" data-testid={`runs-on-${id}`}>
      {data.deployments.map((d) => (
        <li key={d.board_id}>
          <Link href={`/boards/${d.board_id}`}>{d.board_name}</Link>: {d.version} <span class={`badge badge-script-${d.state}`}>{d.state}</span>
        </li>
      ))}
    </ul>
  );
}

/**
 * A script's programs and deployments (its page): every version with a program, where each
 * runs, and for admins the upload of the current version's program and a deploy button.
 */
export function ScriptPrograms({ script }: { script: DeviceScript }) {
  const { data, error, reload } = useResource(() => getPrograms(script.id), [script.id], { pollMs: 5000 });
  const { boards } = useBoards();
  // `?board=<id>`: the board a link sent the person to deploy on (the drive view's "deploy the webcam").
  const [boardId, setBoardId] = useState(() => new URLSearchParams(currentQuery.value).get('board') ?? '');
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [deploying, setDeploying] = useState<Operation | null>(null);
  const current = data?.programs.find((p) => p.version === script.version);
  const target = boardId || (boards?.length === 1 ? boards[0]!.id : '');

  async function upload(e: Event) {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const file = (formEl.elements.namedItem('file') as HTMLInputElement).files?.[0];
    if (!file) return;
    const form = new FormData();
    form.append('file', file);
    setProblem(null);
    setProgress({ loaded: 0, total: file.size });
    try {
      await postFormWithProgress(`/api/device-scripts/${script.id}/file/`, form, (loaded, total) => setProgress({ loaded, total }), 'PUT');
      formEl.reset();
      reload();
    } catch (err) {
      setProblem(err);
    } finally {
      setProgress(null);
    }
  }

  async function deploy() {
    setProblem(null);
    try {
      const op = await unwrap(
        client.POST('/api/device-scripts/{id}/deploy/', { params: { path: { id: script.id } }, headers: { prefer: 'respond-async' }, body: { board_id: target } }),
      );
      setDeploying(op);
    } catch (err) {
      setProblem(err);
    }
  }

  return (
    <div class="card stack" data-testid="script-programs">
      <h2>Programs and boards</h2>
      <ErrorBox error={error && !data ? error : null} />
      {data && (
        <>
          {data.programs.length === 0 ? (
            <p class="muted">No program is uploaded yet{isAdmin.value ? ': upload the file the board runs below.' : '.'}</p>
          ) : (
            <DataTable label="Programs by version" columns={['Version', 'File', 'Size', 'Uploaded', 'Runs on']}>
              {data.programs.map((p) => {
                const on = data.deployments.filter((d) => d.version === p.version);
                return (
                  <tr key={p.version}>
                    <td>
                      <a href={`/api/device-scripts/${script.id}/file/?version=${p.version}`} download={p.filename}>
                        {p.version}
                      </a>
                      {p.version === script.version && <span class="muted small"> (current)</span>}
                    </td>
                    <td>
                      <code class="small">{p.filename}</code>
                    </td>
                    <td>{formatBytes(p.size)}</td>
                    <td title={formatTime(p.uploaded_at)}>{ago(p.uploaded_at)}</td>
                    <td>
                      {on.length === 0
                        ? '—'
                        : on.map((d) => (
                            <span key={d.board_id} class="small">
                              <Link href={`/boards/${d.board_id}`}>{d.board_name}</Link> <span class={`badge badge-script-${d.state}`}>{d.state}</span>{' '}
                            </span>
                          ))}
                    </td>
                  </tr>
                );
              })}
            </DataTable>
          )}
        </>
      )}
      {isAdmin.value && (
        <>
          <form class="stack" aria-label={`Upload the program of version ${script.version}`} onSubmit={(e) => void upload(e)}>
            <label>
              <span>
                Program of version {script.version} (runs as <code>{script.script_filename}</code>
                {current ? `; replaces the ${formatBytes(current.size)} uploaded ${ago(current.uploaded_at)}` : ''})
              </span>
              <input name="file" type="file" required />
            </label>
            {progress && <progress max={progress.total || 1} value={progress.loaded} aria-label="Program upload progress" />}
            <div>
              <button type="submit" disabled={!!progress}>
                Upload
              </button>
            </div>
          </form>
          <div class="row">
            {boards && boards.length > 1 && <BoardPicker id="deploy-board" boards={boards} value={boardId} onChange={setBoardId} />}
            <button type="button" class="primary" disabled={!current || !target || (!!deploying && (deploying.status === 'queued' || deploying.status === 'running'))} onClick={() => void deploy()}>
              Deploy {script.version}
              {boards?.length === 1 ? ` to ${boards[0]!.name}` : ''}
            </button>
            {!current && <span class="muted small">Upload the program of {script.version} first.</span>}
          </div>
        </>
      )}
      <ErrorBox error={problem} onDismiss={() => setProblem(null)} />
      {deploying && (
        <OperationLive
          key={deploying.id}
          operation={deploying}
          onEnd={() => reload()}
        />
      )}
    </div>
  );
}
