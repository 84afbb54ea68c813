import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import './terminal-view.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { authHeaders } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { exitText, type TerminalExit } from '../lib/terminal-exit.ts';
import { captureStyleElements, mirrorXtermStyles } from '../lib/xterm-styles.ts';
import { ErrorBox } from './error-box.tsx';

type State =
  | { kind: 'checking' }
  | { kind: 'refused'; problem: ApiProblem }
  | { kind: 'open' }
  | { kind: 'ended'; exit: TerminalExit }
  | { kind: 'lost' };

/** A refusal before the terminal opened, explained (the rest go to ErrorBox's general words). */
function refusalText(p: ApiProblem): { what: string; next: string } | null {
  switch (p.code) {
    case 'reservation_required':
      return { what: 'A terminal needs the board’s reservation.', next: 'Reserve the board (on its page or the Reservations page), or ask an admin.' };
    case 'terminal_disabled':
      // The server's detail repeats the first sentence: the causes are said here instead.
      return { what: 'This board refuses terminals.', next: 'Its agent has MM_TERMINAL=off, runs as root or as a user with no login shell without MM_TERMINAL_USER, or is too old (the agent’s log says which): an admin changes that in the board’s agent settings.' };
    case 'board_offline':
      return { what: 'The board is offline.', next: p.detail || 'Open the terminal once the board is back online.' };
    default:
      return null;
  }
}

const THEME = {
  background: '#0d1117',
  foreground: '#e6edf3',
  cursor: '#e6edf3',
  selectionBackground: '#264f78',
};

/**
 * Asks the server whether this terminal may open, before the WebSocket: a browser tells a
 * page nothing about a refused upgrade (no status, no body), but the same URL without the
 * upgrade runs the same checks and answers their problem, or 426 when all of them pass.
 */
async function mayOpen(boardId: string, cols: number, rows: number): Promise<ApiProblem | null> {
  let res: Response;
  try {
    res = await fetch(`/api/boards/${encodeURIComponent(boardId)}/terminal/?cols=${cols}&rows=${rows}`, { credentials: 'same-origin', headers: authHeaders() });
  } catch (err) {
    return ApiProblem.network(err);
  }
  if (res.status === 426) return null;
  return ApiProblem.fromResponse(res);
}

/**
 * A terminal on the board (docs/terminal.md) with xterm.js: the WebSocket of
 * `GET /api/boards/<id>/terminal/`, keys in and output out as binary frames, a resize frame
 * whenever the box changes size, and the end (the shell's exit status, or why it ended) or
 * the refusal said in words under it. Closing the page hangs the shell up.
 */
export function TerminalView({ boardId }: { boardId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const el = box.current!;
    // Before xterm makes its first style element (lib/xterm-styles.ts: the CSP).
    const releaseStyles = captureStyleElements();
    const term = new Terminal({
      theme: THEME,
      fontFamily: "'DejaVu Sans Mono', ui-monospace, Menlo, Consolas, monospace",
      fontSize: 14,
      cursorBlink: true,
      scrollback: 5000,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    const unmirror = mirrorXtermStyles(el);
    const refit = () => {
      try {
        fit.fit();
      } catch {
        // Not laid out (a hidden box): the next resize fits it.
      }
    };
    refit();
    let ws: WebSocket | null = null;
    let closed = false;
    const encoder = new TextEncoder();
    const send = (data: Uint8Array<ArrayBuffer> | string) => {
      if (ws?.readyState === WebSocket.OPEN) ws.send(data);
    };

    const dataSub = term.onData((s) => send(encoder.encode(s)));
    // Mouse reports in the X10 encoding: bytes as a "binary string".
    const binarySub = term.onBinary((s) => send(Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff)));
    // The size on the box too: what a test (or a person in devtools) compares with `stty size`.
    const showSize = () => Object.assign(el.dataset, { cols: String(term.cols), rows: String(term.rows) });
    showSize();
    const resizeSub = term.onResize(({ cols, rows }) => {
      showSize();
      send(JSON.stringify({ type: 'resize', cols, rows }));
    });
    const observer = new ResizeObserver(refit);
    observer.observe(el);
    window.addEventListener('resize', refit);

    void (async () => {
      const refused = await mayOpen(boardId, term.cols, term.rows);
      if (closed) return;
      if (refused) return setState({ kind: 'refused', problem: refused });
      const url = new URL(`/api/boards/${encodeURIComponent(boardId)}/terminal/?cols=${term.cols}&rows=${term.rows}`, location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      const socket = new WebSocket(url);
      ws = socket;
      socket.binaryType = 'arraybuffer';
      let exit: TerminalExit | null = null;
      socket.onopen = () => {
        setState({ kind: 'open' });
        // The size may have changed between the check and the upgrade.
        send(JSON.stringify({ type: 'resize', cols: term.cols, rows: term.rows }));
        term.focus();
      };
      socket.onmessage = (e: MessageEvent<ArrayBuffer | string>) => {
        if (typeof e.data !== 'string') return term.write(new Uint8Array(e.data));
        try {
          const msg = JSON.parse(e.data) as { type?: string };
          if (msg.type === 'exit') exit = msg as TerminalExit;
        } catch {
          // Not a frame this client knows: ignored.
        }
      };
      socket.onclose = () => {
        if (closed) return;
        term.options.cursorBlink = false;
        term.options.disableStdin = true;
        if (exit) return setState({ kind: 'ended', exit });
        // Refused at the upgrade after all (the board went between the check and the
        // upgrade) or cut later: ask again to say why.
        void mayOpen(boardId, term.cols, term.rows).then((p) => {
          if (!closed) setState(p && p.code !== 'upgrade_required' ? { kind: 'refused', problem: p } : { kind: 'lost' });
        });
      };
    })();

    return () => {
      closed = true;
      ws?.close();
      observer.disconnect();
      window.removeEventListener('resize', refit);
      dataSub.dispose();
      binarySub.dispose();
      resizeSub.dispose();
      term.dispose();
      unmirror();
      releaseStyles();
    };
  }, [boardId, attempt]);

  const again = () => {
    setState({ kind: 'checking' });
    setAttempt((n) => n + 1);
  };

  return (
    <div class="stack terminal-view">
      <div class="terminal-box" ref={box} data-testid="terminal" data-state={state.kind} key={attempt} />
      <div aria-live="polite" data-testid="terminal-status">
        {state.kind === 'checking' && <p class="muted">Opening the terminal…</p>}
        {state.kind === 'open' && <p class="muted small">Connected. Keys go to the board’s shell; closing this page hangs it up.</p>}
        {state.kind === 'ended' && (
          <div class="card row wrap" data-testid="terminal-ended">
            <p>
              <strong>{exitText(state.exit)}</strong>
            </p>
            <button type="button" onClick={again}>
              Open a new session
            </button>
          </div>
        )}
        {state.kind === 'lost' && (
          <div class="card row wrap" data-testid="terminal-ended">
            <p>
              <strong>The connection to the terminal closed.</strong>
            </p>
            <button type="button" onClick={again}>
              Open a new session
            </button>
          </div>
        )}
        {state.kind === 'refused' && <Refusal problem={state.problem} onRetry={again} />}
      </div>
    </div>
  );
}

function Refusal({ problem, onRetry }: { problem: ApiProblem; onRetry: () => void }) {
  const words = refusalText(problem);
  return (
    <div class="stack" data-testid="terminal-refused" data-code={problem.code}>
      {words ? (
        <div class="error" role="alert">
          <p>
            <strong>{words.what}</strong>
          </p>
          <p>{words.next}</p>
        </div>
      ) : (
        <ErrorBox error={problem} />
      )}
      <div>
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      </div>
    </div>
  );
}
