import { useEffect, useRef, useState } from 'preact/hooks';
import { client, unwrap, type BoardScript, type Operation } from '../api/client.ts';
import { ErrorBox } from './error-box.tsx';
import { Link } from './link.tsx';
import { OperationLive } from './operation-live.tsx';
import { DataTable } from './table-box.tsx';
import { ago, formatTime } from '../lib/format.ts';
import { canOperate } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';

type ScriptAction = 'start' | 'stop' | 'restart';

const CONTROL_PATHS = {
  start: '/api/device-scripts/{id}/start/',
  stop: '/api/device-scripts/{id}/stop/',
  restart: '/api/device-scripts/{id}/restart/',
} as const;

/** Starts a script operation without waiting for it (`Prefer: respond-async`): its live view follows it. */
function startOperation(scriptId: string, action: ScriptAction, boardId: string): Promise<Operation> {
  return unwrap(client.POST(CONTROL_PATHS[action], { params: { path: { id: scriptId } }, headers: { prefer: 'respond-async' }, body: { board_id: boardId } }));
}

/**
 * The board page's device scripts: each deployed script's state (polled), start/stop/restart
 * for operators (an operation, followed live), and the tail of the chosen script's output.
 */
export function BoardScripts({ boardId, online }: { boardId: string; online: boolean }) {
  const { data, error, reload } = useResource(() => unwrap(client.GET('/api/boards/{id}/scripts/', { params: { path: { id: boardId } } })), [boardId], { pollMs: 3000 });
  const [logsOf, setLogsOf] = useState<string | null>(null);
  const [running, setRunning] = useState<{ op: Operation; label: string } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const scripts = data?.scripts ?? null;

  useEffect(() => {
    if (scripts && scripts.length > 0 && !logsOf) setLogsOf(scripts[0]!.script_id);
  }, [scripts?.length]);

  async function act(s: BoardScript, action: ScriptAction) {
    setActionError(null);
    try {
      const op = await startOperation(s.script_id, action, boardId);
      setRunning({ op, label: `${action[0]!.toUpperCase()}${action.slice(1)} ${s.name}` });
    } catch (err) {
      setActionError(err);
    }
  }

  const chosen = scripts?.find((s) => s.script_id === logsOf);
  return (
    <div class="stack" data-testid="board-scripts">
      <h2>Device scripts</h2>
      <ErrorBox error={error && !data ? error : null} />
      {scripts && scripts.length === 0 && (
        <p class="muted">
          No device script is deployed on this board. Deploy one from the <Link href="/device-scripts">device scripts</Link> page.
        </p>
      )}
      {scripts && scripts.length > 0 && !online && <p class="muted small">The board is offline: these are the states it last reported.</p>}
      {scripts && scripts.length > 0 && (
        <DataTable label="Device scripts on this board" columns={['Script', 'Version', 'Port', 'State', 'Since', 'Restarts', '']}>
          {scripts.map((s) => (
            <tr key={s.script_id}>
              <td>
                <Link href={`/device-scripts/${s.script_id}`}>{s.name}</Link>
              </td>
              <td>{s.version}</td>
              <td>{s.port}</td>
              <td>
                <span class={`badge badge-script-${s.state}`} data-testid={`script-state-${s.script_id}`}>
                  {s.state}
                </span>
              </td>
              <td title={formatTime(s.since)}>{ago(s.since)}</td>
              <td>{s.restarts}</td>
              <td>
                <div class="row">
                  <button type="button" aria-pressed={logsOf === s.script_id} onClick={() => setLogsOf(s.script_id)}>
                    Output <span class="visually-hidden">of {s.name}</span>
                  </button>
                  {canOperate.value &&
                    (['start', 'stop', 'restart'] as const)
                      .filter((a) => (s.state === 'running' ? a !== 'start' : a !== 'stop'))
                      .map((a) => (
                        <button key={a} type="button" disabled={!online || !!running} onClick={() => void act(s, a)}>
                          {a[0]!.toUpperCase() + a.slice(1)} <span class="visually-hidden">{s.name}</span>
                        </button>
                      ))}
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorBox error={actionError} onDismiss={() => setActionError(null)} />
      {running && (
        <div class="card stack">
          <h3>{running.label}</h3>
          <OperationLive
            key={running.op.id}
            operation={running.op}
            onEnd={() => {
              setRunning(null);
              reload();
            }}
          />
        </div>
      )}
      {chosen && <ScriptOutput key={chosen.script_id} boardId={boardId} script={chosen} online={online} />}
    </div>
  );
}

/** The tail of a script's output on the board, fetched again every few seconds while the board is online. */
function ScriptOutput({ boardId, script, online }: { boardId: string; script: BoardScript; online: boolean }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    if (!online) return;
    let current = true;
    const load = async () => {
      try {
        const t = await unwrap(client.GET('/api/device-scripts/{id}/logs/', { params: { path: { id: script.script_id }, query: { board_id: boardId } }, parseAs: 'text' }));
        if (!current) return;
        setText(t);
        setError(null);
      } catch (err) {
        if (current) setError(err);
      }
    };
    void load();
    const timer = setInterval(() => void load(), 3000);
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, [script.script_id, boardId, online]);
  useEffect(() => {
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text]);
  return (
    <div class="stack">
      <h3>Output of {script.name}</h3>
      <ErrorBox error={error} />
      {!online && <p class="muted">The board is not online: its scripts' output is read from the board.</p>}
      <pre class="log log-tail" ref={pre} role="log" aria-label={`Recent output of ${script.name}`} data-testid="script-output" tabIndex={0}>
        {text ?? ''}
      </pre>
    </div>
  );
}
