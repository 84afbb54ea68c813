import { useEffect, useRef, useState } from 'preact/hooks';
import { client, unwrap, type Board } from '../api/client.ts';
import { BoardPicker, useBoards } from '../components/board-picker.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { MotorPad } from '../components/motor-pad.tsx';
import { followCamera, type CameraProblem } from '../lib/mjpeg.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { relayTo } from '../lib/relay.ts';
import { followEvents } from '../lib/sse.ts';
import { canOperate } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';

/** No frame for this long while the camera was showing: the feed counts as lost (and the motor stops). */
const FEED_LOST_MS = 3000;

/**
 * The drive view: the board's camera beside the motor pad. The pad drives only once a board
 * is chosen, always names it, and stops the motor when the tab is hidden, the window loses
 * focus, the motor's live feed drops or the camera feed is lost. Keys: arrows or W/A/S/D
 * while held, Space stops.
 */
export function DrivePage() {
  const { boards, error: boardsError } = useBoards(10_000);
  // The chosen board lives in the URL (`/drive?board=<id>`): a reload or a shared link keeps it.
  const boardId = new URLSearchParams(currentQuery.value).get('board') ?? '';
  const setBoardId = (id: string) => navigate(id ? `/drive?board=${encodeURIComponent(id)}` : '/drive', true);
  const scripts = useResource(
    async () => {
      const [gpio, webcam] = await Promise.all([
        unwrap(client.GET('/api/device-scripts/', { params: { query: { device_type: 'gpio' } } })),
        unwrap(client.GET('/api/device-scripts/', { params: { query: { device_type: 'webcam' } } })),
      ]);
      return { motor: gpio.scripts[0], camera: webcam.scripts[0] };
    },
    [],
  );
  useEffect(() => {
    if (boards?.length === 1 && !boardId) setBoardId(boards[0]!.id);
  }, [boards]);

  const board = boards?.find((b) => b.id === boardId);
  const motor = scripts.data?.motor;
  const camera = scripts.data?.camera;
  return (
    <section aria-labelledby="drive-title" class="stack">
      <h1 id="drive-title">Drive</h1>
      <ErrorBox error={boardsError ?? scripts.error} />
      {boards && boards.length === 0 && (
        <p>
          No board is registered: <Link href="/boards">register one</Link> to drive it.
        </p>
      )}
      {boards && boards.length > 0 && <BoardPicker id="drive-board" boards={boards} value={boardId} onChange={setBoardId} note={camera ? (b) => cameraNote(b, camera.id) : undefined} />}
      <p data-testid="driving-board" aria-live="polite">
        {board ? (
          <>
            Driving <strong>{board.name}</strong> <span class="muted small">({board.status})</span>
          </>
        ) : (
          'No board chosen: choose the board to drive.'
        )}
      </p>
      <div class="grid two">
        <div class="card stack">
          <h2>Camera</h2>
          {!camera && scripts.data && <p>The catalogue has no webcam script (device type webcam).</p>}
          {camera && board ? (
            <CameraView key={`${board.id}/${camera.id}`} scriptId={camera.id} scriptName={camera.name} board={board} />
          ) : (
            camera && <p class="muted">Choose a board to see its camera.</p>
          )}
        </div>
        <div class="card stack">
          <h2>Motor</h2>
          {!motor && scripts.data && <p>The catalogue has no GPIO motor script (device type gpio).</p>}
          {motor && (board && canOperate.value ? <MotorCard key={`${board.id}/${motor.id}`} scriptId={motor.id} boardId={board.id} /> : <DisabledPad why={board ? 'Driving needs the operator role.' : 'Choose a board first.'} />)}
        </div>
      </div>
    </section>
  );
}

/** What the board chooser says of a board's camera: the webcam script as the board reports it. */
function cameraNote(b: Board, scriptId: string): string | undefined {
  const s = b.scripts.find((x) => x.script_id === scriptId);
  if (!s) return undefined;
  return s.state === 'running' ? 'camera' : `camera ${s.state}`;
}

/** The camera relay's frames in an `<img>`, with their count and age; tells the pad when the feed is lost. */
function CameraView({ scriptId, scriptName, board }: { scriptId: string; scriptName: string; board: Board }) {
  const boardId = board.id;
  const [src, setSrc] = useState<string | null>(null);
  const [frames, setFrames] = useState(0);
  const [age, setAge] = useState<number | null>(null);
  const [status, setStatus] = useState<{ up: boolean; error?: string; problem?: CameraProblem }>({ up: false });
  const lastFrameAt = useRef(0);
  const [lost, setLost] = useState(false);

  useEffect(() => {
    let url: string | null = null;
    let count = 0;
    const stop = followCamera(`/api/device-scripts/${scriptId}/camera/?board_id=${encodeURIComponent(boardId)}`, {
      onFrame(f) {
        const next = URL.createObjectURL(f.jpeg);
        if (url) URL.revokeObjectURL(url);
        url = next;
        count++;
        lastFrameAt.current = Date.now();
        setSrc(next);
        setFrames(count);
        setAge(f.capturedAt !== undefined ? Date.now() - f.capturedAt : null);
        setLost(false);
      },
      onStatus: (up, error, problem) => setStatus({ up, ...(error ? { error } : {}), ...(problem ? { problem } : {}) }),
    });
    const watchdog = window.setInterval(() => {
      if (lastFrameAt.current > 0 && Date.now() - lastFrameAt.current > FEED_LOST_MS) setLost(true);
    }, 500);
    return () => {
      stop();
      clearInterval(watchdog);
      if (url) URL.revokeObjectURL(url);
      cameraLost.value = false;
    };
  }, [scriptId, boardId]);

  useEffect(() => {
    cameraLost.value = lost;
    cameraListeners.forEach((l) => l());
  }, [lost]);

  // The board refused the camera's port and the script is not deployed there: the fix is to deploy it.
  const notDeployed = !status.up && status.problem?.deployed === false;
  return (
    <div class="stack">
      <div class="camera">
        {src ? (
          <img src={src} alt="The board's camera, live" data-testid="camera-frame" />
        ) : notDeployed ? (
          <div class="stack camera-missing" data-testid="camera-not-deployed">
            <p>
              <strong>{scriptName}</strong> is not deployed on <strong>{board.name}</strong>: deploy it to see this board's camera.
            </p>
            <p>
              <Link href={`/device-scripts/${scriptId}?board=${encodeURIComponent(boardId)}`}>Deploy {scriptName} on {board.name}…</Link>
            </p>
          </div>
        ) : (
          <p class="muted">{status.error ?? 'Waiting for the camera…'}</p>
        )}
      </div>
      <p class="small muted" data-testid="camera-status" aria-live="polite">
        {lost
          ? 'Camera feed lost: the motor was stopped.'
          : status.up
            ? 'Camera live'
            : notDeployed
              ? `Camera not connected: ${scriptName} is not deployed on this board`
              : `Camera not connected${status.error ? `: ${status.error}` : ''}`}
        {' · '}
        <span data-testid="camera-frames">{frames}</span> frames{age !== null && ` · ${age} ms behind capture`}
      </p>
    </div>
  );
}

/** Whether the camera view lost its feed (the pad stops on it); a tiny shared flag between the two cards. */
const cameraLost = { value: false };
const cameraListeners = new Set<() => void>();

function useCameraLost(): boolean {
  const [lost, setLost] = useState(cameraLost.value);
  useEffect(() => {
    const l = () => setLost(cameraLost.value);
    cameraListeners.add(l);
    return () => {
      cameraListeners.delete(l);
    };
  }, []);
  return lost;
}

/** The pad for the chosen board, following the motor's live feed (the pad stops when it drops). */
function MotorCard({ scriptId, boardId }: { scriptId: string; boardId: string }) {
  const [linkUp, setLinkUp] = useState(false);
  const [upstreamUp, setUpstreamUp] = useState(true);
  const [motion, setMotion] = useState<string | null>(null);
  const lost = useCameraLost();
  const relay = relayTo(scriptId, boardId);
  useEffect(
    () =>
      followEvents(`/api/device-scripts/${scriptId}/stream/?board_id=${encodeURIComponent(boardId)}`, {
        onConnection: setLinkUp,
        onEvent(e) {
          try {
            const d = JSON.parse(e.data) as Record<string, unknown>;
            if (e.event === 'upstream') setUpstreamUp(d.state === 'up');
            else if (typeof d.motion === 'string') setMotion(d.motion);
          } catch {
            /* not JSON */
          }
        },
      }),
    [scriptId, boardId],
  );
  return (
    <>
      <MotorPad relay={relay} linkUp={linkUp && upstreamUp && !lost} wasd />
      <p class="small muted">Arrows or W/A/S/D: drive while held · Space: stop</p>
      <p class="small" data-testid="drive-motion">
        Motor feed: {linkUp && upstreamUp ? 'connected' : 'not connected'}
        {motion && (
          <>
            {' · '}motion <strong>{motion}</strong>
          </>
        )}
      </p>
    </>
  );
}

/** The pad's buttons, greyed: nothing to drive yet. */
function DisabledPad({ why }: { why: string }) {
  const dirs = ['forward', 'left', 'stop', 'right', 'backward'] as const;
  const arrows = { forward: '▲', left: '◀', stop: '■', right: '▶', backward: '▼' };
  return (
    <div class="stack">
      <div class="pad" role="group" aria-label="Drive pad (disabled)">
        {dirs.map((d) => (
          <button key={d} type="button" class={`pad-${d}`} disabled aria-label={d === 'stop' ? 'Stop' : `Drive ${d} (hold)`} data-testid={`drive-${d}`}>
            <span aria-hidden="true">{arrows[d]}</span>
          </button>
        ))}
      </div>
      <p class="small muted">{why}</p>
    </div>
  );
}
