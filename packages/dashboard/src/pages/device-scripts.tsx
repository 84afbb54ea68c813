import { RunOnBoards } from '../components/run-on-boards.tsx';
import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type DeviceScript } from '../api/client.ts';
import { BoardPicker, useBoards } from '../components/board-picker.tsx';
import { ConfirmButton } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { DataTable } from '../components/table-box.tsx';
import { Link } from '../components/link.tsx';
import { MotorPad, ServoSlider } from '../components/motor-pad.tsx';
import { ScriptPrograms, ScriptRunsOn } from '../components/script-programs.tsx';
import { formatTime } from '../lib/format.ts';
import { relayTo } from '../lib/relay.ts';
import { followEvents } from '../lib/sse.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';

export function DeviceScriptsPage() {
  const [editing, setEditing] = useState<DeviceScript | 'new' | null>(null);
  const { data, error, reload } = useResource(() => unwrap(client.GET('/api/device-scripts/', {})), []);
  const scripts = data?.scripts;
  return (
    <section aria-labelledby="scripts-title" class="stack">
      <div class="page-head">
        <h1 id="scripts-title">Device scripts</h1>
        {isAdmin.value && !editing && (
          <button type="button" class="primary" onClick={() => setEditing('new')}>
            Add a script
          </button>
        )}
      </div>
      <ErrorBox error={error} />
      {editing && (
        <ScriptForm
          script={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            reload();
          }}
        />
      )}
      {scripts && scripts.length === 0 && (
        <p>No device script is in the catalogue yet.{isAdmin.value ? ' Add one with “Add a script” above: its name, port and where it lives on the board.' : ' An administrator adds them.'}</p>
      )}
      {scripts && scripts.length > 0 && (
        <DataTable label="Device scripts" columns={['Name', 'Type', 'Version', 'On the board', 'Port', 'Runs on', 'Updated', isAdmin.value && '']}>
          {scripts.map((s) => (
            <tr key={s.id}>
              <td>
                <Link href={`/device-scripts/${s.id}`}>{s.name}</Link>
                {s.description && (
                  <div class="muted small clamp-2" title={s.description}>
                    {s.description}
                  </div>
                )}
              </td>
              <td>{s.device_type}</td>
              <td>{s.version}</td>
              <td>
                <code class="small script-path">
                  {s.remote_dir}/{s.script_filename}
                </code>
              </td>
              <td>{s.port}</td>
              <td>
                <ScriptRunsOn id={s.id} />
              </td>
              <td>{formatTime(s.updated_at)}</td>
              {isAdmin.value && (
                <td>
                  <div class="row">
                    <button type="button" onClick={() => setEditing(s)}>
                      Edit <span class="visually-hidden">{s.name}</span>
                    </button>
                    <ConfirmButton
                      label={
                        <>
                          Delete <span class="visually-hidden">{s.name}</span>
                        </>
                      }
                      question={`Delete “${s.name}” from the catalogue?`}
                      yes="Yes, delete"
                      action={async () => {
                        await unwrap(client.DELETE('/api/device-scripts/{id}/', { params: { path: { id: s.id } } }));
                        reload();
                      }}
                    />
                  </div>
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

function ScriptForm({ script, onDone }: { script: DeviceScript | null; onDone: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const field = (name: keyof DeviceScript, label: string, extra: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input name={String(name)} defaultValue={script ? String(script[name]) : ''} {...extra} />
    </label>
  );
  return (
    <form
      class="card stack"
      aria-label={script ? `Edit ${script.name}` : 'Add a script'}
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const body = {
          name: String(f.get('name')),
          device_type: String(f.get('device_type')),
          description: String(f.get('description') ?? ''),
          script_filename: String(f.get('script_filename')),
          remote_dir: String(f.get('remote_dir')),
          port: Number(f.get('port')),
          version: String(f.get('version')),
        };
        try {
          if (script) await unwrap(client.PUT('/api/device-scripts/{id}/', { params: { path: { id: script.id } }, body }));
          else await unwrap(client.POST('/api/device-scripts/', { body }));
          onDone();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2>{script ? `Edit ${script.name}` : 'Add a script'}</h2>
      <div class="grid two">
        {field('name', 'Name', { required: true })}
        {field('device_type', 'Device type (a lowercase word, e.g. gpio)', { required: true, pattern: '[a-z][a-z0-9_\\-]*' })}
        {field('script_filename', 'Script file name', { required: true })}
        {field('remote_dir', 'Folder on the board (absolute)', { required: true, pattern: '/.*' })}
        {field('port', 'Port', { required: true, type: 'number', min: 1, max: 65535 })}
        {field('version', 'Version (x.y.z)', { required: true, pattern: '\\d+\\.\\d+\\.\\d+' })}
      </div>
      <label>
        Description
        <textarea name="description" rows={2} defaultValue={script?.description ?? ''} />
      </label>
      <ErrorBox error={error} />
      <div class="row">
        <button type="submit" class="primary">
          Save
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface StreamEntry {
  id: string | undefined;
  event: string;
  text: string;
  at: string;
}

export function DeviceScriptPage({ id }: { id: string }) {
  const { data: script, error } = useResource(() => unwrap(client.GET('/api/device-scripts/{id}/', { params: { path: { id } } })), [id]);
  const [events, setEvents] = useState<StreamEntry[]>([]);
  const [state, setState] = useState<Record<string, unknown> | null>(null);
  const [linkUp, setLinkUp] = useState(false);
  const [upstreamUp, setUpstreamUp] = useState(true);
  const { boards } = useBoards();
  const [boardId, setBoardId] = useState('');

  useEffect(() => {
    if (boards?.length === 1 && !boardId) setBoardId(boards[0]!.id);
  }, [boards]);

  const query = boardId && (boards?.length ?? 0) > 1 ? `?board_id=${encodeURIComponent(boardId)}` : '';
  const relay = relayTo(id, query ? boardId : undefined);
  useEffect(() => {
    // Only once the boards are known: before, with several boards and none chosen, the stream
    // was opened without one and the server refused it (a failed request on every visit).
    if (!script || !boards || boards.length === 0 || (boards.length > 1 && !boardId)) return;
    setEvents([]);
    return followEvents(`/api/device-scripts/${id}/stream/${query}`, {
      onConnection: setLinkUp,
      onEvent(e) {
        let text = e.data;
        try {
          const d = JSON.parse(e.data) as Record<string, unknown>;
          if (e.event === 'upstream') {
            setUpstreamUp(d.state === 'up');
            text = d.state === 'up' ? 'the script is back' : `the script's stream dropped${d.message ? `: ${String(d.message)}` : ''}`;
          } else if (d.motion !== undefined || d.servo !== undefined) {
            setState(d);
            const servo = d.servo as { angle?: number } | undefined;
            text = `${String(d.cause ?? 'state')}: motion ${String(d.motion)}, servo ${servo?.angle ?? '?'}°`;
          }
        } catch {
          /* not JSON: shown as it came */
        }
        setEvents((list) => [{ id: e.id, event: e.event, text, at: new Date().toISOString() }, ...list].slice(0, 100));
      },
    });
  }, [script?.id, query, boards?.length]);

  // The motor's state as soon as the feed is connected: the stream sends it when the relay
  // first subscribes, but a relay subscription that was already open (another page, another
  // person, a replica sharing it) has sent it before this page came.
  useEffect(() => {
    if (!linkUp || script?.device_type !== 'gpio') return;
    let current = true;
    relay('GET', { path: 'state' })
      .then((d) => current && setState((known) => known ?? (d as Record<string, unknown>)))
      .catch(() => {
        /* the feed shows the script's trouble; the pad's commands show their own errors */
      });
    return () => {
      current = false;
    };
  }, [linkUp, script?.id, query]);

  if (error && !script) return <ErrorBox error={error} />;
  if (!script) return <p aria-busy="true">Loading…</p>;
  const isMotor = script.device_type === 'gpio';
  const servo = state?.servo as { angle?: number } | undefined;
  return (
    <section aria-labelledby="script-title" class="stack">
      <p>
        <Link href="/device-scripts">← Device scripts</Link>
      </p>
      <h1 id="script-title">{script.name}</h1>
      <p>{script.description}</p>
      <p class="small muted">
        {script.device_type} · version {script.version} · port {script.port} · <code>{script.remote_dir}/{script.script_filename}</code>
      </p>
      <RunOnBoards kind="script_deploy" params={{ script_id: script.id }} />
      <ScriptPrograms script={script} />
      {boards && boards.length > 1 && <BoardPicker id="script-board" boards={boards} value={boardId} onChange={setBoardId} />}
      {boards && boards.length === 0 && (
        <p>
          No board is registered: <Link href="/boards">register one</Link> to drive this script.
        </p>
      )}
      <p class="small" aria-live="polite">
        Live feed: {linkUp ? (upstreamUp ? 'connected' : 'connected, but the script on the board is not answering') : 'not connected'}
      </p>
      {isMotor && (
        <div class="grid two">
          <div class="card stack">
            <h2>Drive</h2>
            {canOperate.value ? (
              <>
                <MotorPad relay={relay} linkUp={linkUp && upstreamUp} />
                <ServoSlider relay={relay} angle={servo?.angle} />
              </>
            ) : (
              <p>Driving needs the operator role; you can watch the live feed.</p>
            )}
            {state && (
              <p class="small" data-testid="motor-state">
                Motion: <strong>{String(state.motion)}</strong> · servo {servo?.angle ?? '?'}°
              </p>
            )}
          </div>
          <EventFeed events={events} />
        </div>
      )}
      {!isMotor && <EventFeed events={events} />}
    </section>
  );
}

function EventFeed({ events }: { events: StreamEntry[] }) {
  return (
    <div class="card stack">
      <h2>Live events</h2>
      <ol class="feed" aria-label="Live events, newest first" data-testid="event-feed" tabIndex={0}>
        {events.map((e, i) => (
          <li key={`${e.id ?? ''}-${i}`}>
            <span class="muted small">{e.id ? `#${e.id} ` : ''}{e.event}</span> {e.text}
          </li>
        ))}
      </ol>
      {events.length === 0 && <p class="muted">Nothing yet.</p>}
    </div>
  );
}

