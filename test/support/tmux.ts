/**
 * A terminal for tests that check what a person sees: a command in a detached tmux session
 * (a real pty of a fixed size) whose screen is read with capture-pane.
 */
import { execFileSync } from 'node:child_process';

export interface TmuxScreen {
  /** The screen now with what scrolled off it above, as text (trailing blanks trimmed). */
  capture(): string;
  /** Only what the terminal shows now (its rows), nothing that scrolled off. */
  visible(): string;
  /** Resolves with the screen once it matches. */
  waitFor(match: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Types keys (tmux key names: `C-c`, `Enter`, or text). */
  sendKeys(...keys: string[]): void;
  /** Resizes the terminal (the program in it gets SIGWINCH). */
  resize(cols: number, rows: number): void;
  close(): void;
}

export const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let sessions = 0;

/** Runs `argv` (with `env`, in `cwd`) in a `cols`×`rows` terminal; the pane stays after it exits. */
export function tmuxRun(
  argv: string[],
  opts: { env?: Record<string, string>; unset?: string[]; cwd?: string; cols?: number; rows?: number } = {},
): TmuxScreen {
  const socket = `mm-test-${process.pid}-${++sessions}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const envArgs = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${quote(v)}`);
  const unset = (opts.unset ?? []).map((k) => `-u ${k}`);
  const command = `env ${[...unset, ...envArgs].join(' ')} ${argv.map(quote).join(' ')}; echo "[exit $?]"; sleep 3600`;
  tmux('new-session', '-d', '-s', 'main', '-x', String(opts.cols ?? 120), '-y', String(opts.rows ?? 30), ...(opts.cwd ? ['-c', opts.cwd] : []), command);
  const capture = () => tmux('capture-pane', '-p', '-S', '-', '-t', 'main').replace(/[ \t]+$/gm, '').trimEnd();
  return {
    capture,
    visible: () => tmux('capture-pane', '-p', '-t', 'main').replace(/[ \t]+$/gm, '').trimEnd(),
    async waitFor(match, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const screen = capture();
        if (match(screen)) return screen;
        if (Date.now() > deadline) throw new Error(`the terminal did not show what was expected in time; it shows:\n${screen}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    sendKeys: (...keys) => void tmux('send-keys', '-t', 'main', ...keys),
    resize: (cols, rows) => void tmux('resize-window', '-t', 'main', '-x', String(cols), '-y', String(rows)),
    close() {
      try {
        execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    },
  };
}
