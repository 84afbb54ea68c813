import { useEffect, useRef, useState } from 'preact/hooks';
import type { Relay } from '../lib/relay.ts';
import { ErrorBox } from './error-box.tsx';

type Direction = 'forward' | 'backward' | 'left' | 'right';
const KEYS: Record<string, Direction> = { ArrowUp: 'forward', ArrowDown: 'backward', ArrowLeft: 'left', ArrowRight: 'right' };
/** The drive view's extra keys: W/A/S/D drive like the arrows (Space stops). */
const WASD: Record<string, Direction> = { w: 'forward', s: 'backward', a: 'left', d: 'right' };
const ARROWS: Record<Direction, string> = { forward: '▲', backward: '▼', left: '◀', right: '▶' };
/**
 * The dead-man hold each drive command asks the script for, and how often the pad renews it
 * while a button or key is held: if renewals stop arriving (connection lost, browser
 * frozen, tab killed) the script stops the motor itself within HOLD_MS, stop or no stop.
 */
export const HOLD_MS = 1000;
const RENEW_MS = 250;

/**
 * Press and hold to drive, release to stop. Arrow keys do the same (press/release). Anything
 * that means the person may no longer be in control stops the motor: the tab hidden, the
 * window losing focus, the browser going offline, or the live event feed dropping (`linkUp`).
 */
export function MotorPad({ relay, linkUp, wasd = false }: { relay: Relay; linkUp: boolean; /** W/A/S/D drive too and Space stops (the drive view). */ wasd?: boolean }) {
  const [driving, setDriving] = useState<Direction | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const drivingRef = useRef<Direction | null>(null);
  const renewal = useRef<number>();

  // Commands go one at a time, in order: a stop never overtakes a renewal still on its way
  // (which the script would otherwise take as a new drive command after the stop).
  const queue = useRef<Promise<void>>(Promise.resolve());
  const inFlight = useRef(0);
  function send(path: string, params?: Record<string, string>): void {
    inFlight.current++;
    queue.current = queue.current.then(async () => {
      try {
        await relay('POST', { path, ...(params ? { query: params } : {}) });
        setError(null);
      } catch (err) {
        setError(err);
      } finally {
        inFlight.current--;
      }
    });
  }
  function drive(dir: Direction) {
    if (drivingRef.current === dir) return;
    drivingRef.current = dir;
    setDriving(dir);
    setNotice('');
    const command = () => send(`motor/${dir}`, { hold_ms: String(HOLD_MS) });
    command();
    clearInterval(renewal.current);
    // A renewal is skipped while an earlier command has not been answered (a slow link).
    renewal.current = window.setInterval(() => drivingRef.current === dir && inFlight.current === 0 && command(), RENEW_MS);
  }
  /** `always`: the explicit Stop button sends stop even when we think the motor is idle. */
  function stop(why = '', always = false) {
    clearInterval(renewal.current);
    if (drivingRef.current === null && !always) return;
    drivingRef.current = null;
    setDriving(null);
    if (why) setNotice(why);
    send('motor/stop');
  }

  useEffect(() => {
    if (!linkUp) stop('The live connection to the board was lost: the motor was stopped.');
  }, [linkUp]);

  useEffect(() => {
    const directionOf = (e: KeyboardEvent): Direction | undefined =>
      KEYS[e.key] ?? (wasd && !e.ctrlKey && !e.metaKey && !e.altKey ? WASD[e.key.toLowerCase()] : undefined);
    const onKeyDown = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      // Keys belong to form fields (the servo slider, selects) when they have focus.
      if (t.closest('input, select, textarea')) return;
      if (wasd && e.key === ' ' && !t.closest('button')) {
        e.preventDefault();
        stop('', true);
        return;
      }
      const dir = directionOf(e);
      if (!dir) return;
      e.preventDefault();
      if (!e.repeat) drive(dir);
    };
    const onKeyUp = (e: KeyboardEvent) => {
      const dir = directionOf(e);
      if (dir && drivingRef.current === dir) stop();
    };
    const onHidden = () => document.visibilityState === 'hidden' && stop('The tab was hidden: the motor was stopped.');
    const onBlur = () => stop('The window lost focus: the motor was stopped.');
    const onOffline = () => stop('The browser went offline: the motor was stopped.');
    window.addEventListener('keydown', onKeyDown);
    window.addEventListener('keyup', onKeyUp);
    document.addEventListener('visibilitychange', onHidden);
    window.addEventListener('blur', onBlur);
    window.addEventListener('offline', onOffline);
    window.addEventListener('pagehide', onBlur);
    return () => {
      window.removeEventListener('keydown', onKeyDown);
      window.removeEventListener('keyup', onKeyUp);
      document.removeEventListener('visibilitychange', onHidden);
      window.removeEventListener('blur', onBlur);
      window.removeEventListener('offline', onOffline);
      window.removeEventListener('pagehide', onBlur);
      stop();
    };
  }, []);

  const button = (dir: Direction) => (
    <button
      type="button"
      class={`pad-${dir}${driving === dir ? ' pressed' : ''}`}
      aria-pressed={driving === dir}
      aria-label={`Drive ${dir} (hold)`}
      data-testid={`drive-${dir}`}
      onPointerDown={(e) => {
        (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
        drive(dir);
      }}
      onPointerUp={() => stop()}
      onPointerCancel={() => stop()}
      onLostPointerCapture={() => stop()}
      onKeyDown={(e) => {
        if ((e.key === ' ' || e.key === 'Enter') && !e.repeat) {
          e.preventDefault();
          drive(dir);
        }
      }}
      onKeyUp={(e) => (e.key === ' ' || e.key === 'Enter') && stop()}
      onContextMenu={(e) => e.preventDefault()}
    >
      <span aria-hidden="true">{ARROWS[dir]}</span>
    </button>
  );

  return (
    <div class="stack">
      <div class="pad" role="group" aria-label="Drive pad: hold a button or an arrow key to drive; release to stop">
        {button('forward')}
        {button('left')}
        <button type="button" class="pad-stop" onClick={() => stop('', true)} aria-label="Stop">
          ■
        </button>
        {button('right')}
        {button('backward')}
      </div>
      <p class="small muted" aria-live="polite">
        {driving ? `Driving ${driving}…` : notice || 'Stopped. Hold a button or an arrow key to drive.'}
      </p>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </div>
  );
}

/** 0–180°: sends while dragging (at most every 100 ms) and the final angle on release. */
export function ServoSlider({ relay, angle }: { relay: Relay; angle: number | undefined }) {
  const [value, setValue] = useState(angle ?? 90);
  const [error, setError] = useState<unknown>(null);
  const last = useRef(0);
  const dragging = useRef(false);
  useEffect(() => {
    if (angle !== undefined && !dragging.current) setValue(angle);
  }, [angle]);
  async function send(a: number) {
    try {
      await relay('POST', { path: 'servo', body: { angle: a } });
      setError(null);
    } catch (err) {
      setError(err);
    }
  }
  return (
    <div class="stack">
      <label for="servo">
        Steering servo angle: <output for="servo">{value}°</output>
      </label>
      <input
        id="servo"
        type="range"
        min={0}
        max={180}
        step={1}
        value={value}
        aria-valuetext={`${value} degrees`}
        onPointerDown={() => (dragging.current = true)}
        onInput={(e) => {
          const a = Number((e.target as HTMLInputElement).value);
          setValue(a);
          if (Date.now() - last.current > 100) {
            last.current = Date.now();
            void send(a);
          }
        }}
        onChange={(e) => {
          dragging.current = false;
          void send(Number((e.target as HTMLInputElement).value));
        }}
      />
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </div>
  );
}
