import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { systemClock, TERMINAL_CHUNK_BYTES, type Clock, type ErrorInfo, type MessageOf, type TimerHandle } from '@mm/protocol';
import type { ControlPlaneLink } from '../link/control-plane-link.ts';
import type { Logger } from '../logger.ts';
import { PTY_HELPER_SOURCE } from './pty-helper.ts';

/** How the board gives terminals (MM_TERMINAL, MM_TERMINAL_USER, MM_TERMINAL_IDLE_S, MM_TERMINAL_SHELL). */
export interface TerminalSettings {
  /** MM_TERMINAL: off refuses every session (the hello does not name `terminal`). */
  enabled: boolean;
  /** The user the shell runs as; undefined = the agent's own user. */
  user: string | undefined;
  /** How the agent becomes that user: `self` (it is that user, or root and switches itself) or `sudo` (sudo -n -u USER -i). */
  via: 'self' | 'sudo';
  /** A session with no bytes either way for this long ends (`idle_timeout`). */
  idleMs: number;
  /** The shell to run (default: the user's login shell from the password database). */
  shell: string | undefined;
  /** The Python 3 that runs the pty helper (MM_PYTHON, default python3). */
  python: string;
  /** Why terminals are off although MM_TERMINAL is on (the agent runs as root and no user is set). */
  refusal?: string;
}

export type TerminalMessage = MessageOf<'term.open'> | MessageOf<'term.data'> | MessageOf<'term.ack'> | MessageOf<'term.resize'> | MessageOf<'term.close'>;

/** One shell in its pseudo-terminal (the Python helper), relayed over one link. */
class TerminalSession {
  private readonly child: ChildProcess;
  /** Output sent the server has not acknowledged yet: past the window, the helper's stdout is paused. */
  private unacked = 0;
  private readonly window: number;
  private paused = false;
  private idle: TimerHandle | undefined;
  private ended = false;
  /** Why the agent ended it (idle, reboot): sent with the exit instead of the shell's status. */
  private endedWith: ErrorInfo | undefined;
  private stderr = '';
  /** Resolves once the helper (and so its shell, which it waits for) has exited. */
  readonly gone: Promise<void>;

  constructor(
    readonly id: number,
    private readonly conn: ControlPlaneLink,
    open: MessageOf<'term.open'>,
    private readonly settings: TerminalSettings,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly onEnd: () => void,
  ) {
    this.window = open.window;
    const args = ['-c', PTY_HELPER_SOURCE, String(open.cols), String(open.rows), settings.user ?? '', settings.via === 'sudo' ? 'sudo' : '', settings.shell ?? ''];
    this.child = spawn(settings.python, args, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: false });
    const child = this.child;
    this.gone = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => {
        if (child.pid === undefined) resolve();
      });
    });
    this.child.stdout!.on('data', (chunk: Buffer) => this.output(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => {
      if (this.stderr.length < 4096) this.stderr += chunk.toString('utf8');
    });
    for (const s of [this.child.stdin, this.child.stdio[3]] as Writable[]) s.on('error', () => {});
    this.child.on('error', (err) => this.finish(null, { code: 'pty_failed', message: `could not start the pseudo-terminal (${settings.python}): ${err.message}` }));
    this.child.on('exit', (code, signal) => {
      const status = code ?? (signal ? 128 + signalNumber(signal) : null);
      if (status !== null && status >= 125 && status <= 127 && this.stderr.trim()) {
        this.finish(null, { code: 'pty_failed', message: this.stderr.trim().split('\n').slice(-3).join(' ') });
      } else this.finish(status);
    });
    this.touch();
    log.info({ term_id: id, cols: open.cols, rows: open.rows, user: settings.user ?? '(agent user)' }, 'terminal opened');
  }

  /** Keystrokes from the server: written to the pty, acknowledged once the pipe took them. */
  input(data: Buffer): void {
    if (this.ended || data.length === 0) return;
    this.touch();
    this.child.stdin!.write(data, (err) => {
      if (!err && this.conn.isReady) this.conn.sendMessage({ type: 'term.ack', term_id: this.id, bytes: data.length });
    });
  }

  resize(cols: number, rows: number): void {
    if (this.ended) return;
    (this.child.stdio[3] as Writable).write(`${cols} ${rows}\n`);
  }

  ack(bytes: number): void {
    this.unacked = Math.max(0, this.unacked - bytes);
    if (this.paused && this.unacked < this.window) {
      this.paused = false;
      this.child.stdout!.resume();
    }
  }

  /** Hangs the shell up (the helper sends SIGHUP, SIGKILL after 3 s); `why` goes with the exit. */
  hangUp(why?: ErrorInfo): void {
    if (this.ended) return;
    if (why) this.endedWith ??= why;
    this.child.stdin!.end();
    // The helper itself, if it does not end: the shell lost its pty master with it.
    const kill = this.clock.setTimeout(() => this.child.kill('SIGKILL'), 5000);
    kill.unref();
    this.child.once('exit', () => this.clock.clearTimeout(kill));
  }

  /** Ends it at once with `why` (said to the server before the link goes), then hangs the shell up. */
  endNow(why: ErrorInfo): void {
    if (this.ended) return;
    this.endedWith = why;
    const child = this.child;
    this.finish(null, why);
    child.stdin!.end();
    const kill = this.clock.setTimeout(() => child.kill('SIGKILL'), 5000);
    kill.unref();
    child.once('exit', () => this.clock.clearTimeout(kill));
  }

  private output(chunk: Buffer): void {
    this.touch();
    for (let at = 0; at < chunk.length; at += TERMINAL_CHUNK_BYTES) {
      const piece = chunk.subarray(at, at + TERMINAL_CHUNK_BYTES);
      if (!this.conn.sendMessage({ type: 'term.data', term_id: this.id, data: piece.toString('base64') })) return;
      this.unacked += piece.length;
    }
    if (this.unacked >= this.window && !this.paused) {
      this.paused = true;
      this.child.stdout!.pause();
    }
  }

  private touch(): void {
    this.clock.clearTimeout(this.idle);
    this.idle = this.clock.setTimeout(() => {
      this.log.info({ term_id: this.id }, 'terminal idle: ending it');
      this.hangUp({ code: 'idle_timeout', message: `The session was idle for ${Math.round(this.settings.idleMs / 1000)} s (MM_TERMINAL_IDLE_S) and was ended.` });
    }, this.settings.idleMs);
    this.idle.unref();
  }

  private finish(code: number | null, error?: ErrorInfo): void {
    if (this.ended) return;
    this.ended = true;
    this.clock.clearTimeout(this.idle);
    const why = this.endedWith ?? error;
    this.log.info({ term_id: this.id, code, error: why?.code }, 'terminal ended');
    if (this.conn.isReady) this.conn.sendMessage({ type: 'term.exit', term_id: this.id, code: why ? null : code, ...(why ? { error: why } : {}) });
    this.onEnd();
  }
}

/**
 * The agent's terminals (docs/terminal.md): `term.open` starts a login shell in a
 * pseudo-terminal, `term.data` / `term.ack` carry its bytes with a window each way, `term.resize`
 * sets its size, `term.close` hangs it up. Sessions end with their link (the server is gone:
 * nobody reads them), after MM_TERMINAL_IDLE_S without a byte, or before a reboot.
 */
export class TerminalManager {
  private readonly sessions = new Map<ControlPlaneLink, Map<number, TerminalSession>>();

  constructor(
    readonly settings: TerminalSettings,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Whether the hello names `terminal`. */
  get offered(): boolean {
    return this.settings.enabled && this.settings.refusal === undefined;
  }

  handle(m: TerminalMessage, conn: ControlPlaneLink): void {
    const table = this.tableOf(conn);
    if (m.type === 'term.open') {
      if (!this.offered) {
        const message = this.settings.refusal ?? 'This board refuses terminals (MM_TERMINAL=off).';
        conn.sendMessage({ type: 'term.exit', term_id: m.term_id, code: null, error: { code: 'terminal_disabled', message } });
        return;
      }
      table.get(m.term_id)?.hangUp();
      const session = new TerminalSession(m.term_id, conn, m, this.settings, this.log, this.clock, () => {
        if (table.get(m.term_id) === session) table.delete(m.term_id);
      });
      table.set(m.term_id, session);
      return;
    }
    const session = table.get(m.term_id);
    if (!session) {
      if (m.type !== 'term.close' && m.type !== 'term.ack') conn.sendMessage({ type: 'term.exit', term_id: m.term_id, code: null, error: { code: 'not_found', message: 'no such terminal session' } });
      return;
    }
    switch (m.type) {
      case 'term.data':
        return session.input(Buffer.from(m.data, 'base64'));
      case 'term.ack':
        return session.ack(m.bytes);
      case 'term.resize':
        return session.resize(m.cols, m.rows);
      case 'term.close':
        return session.hangUp();
    }
  }

  /**
   * Ends every session with `why` (the board reboots for a PAC activation, the agent stops);
   * resolves once their shells are gone (a hung-up shell still writes its history).
   */
  endAll(why: ErrorInfo): Promise<void> {
    const gone: Promise<void>[] = [];
    for (const table of this.sessions.values()) {
      for (const s of table.values()) {
        s.endNow(why);
        gone.push(s.gone);
      }
    }
    return Promise.all(gone).then(() => undefined);
  }

  get count(): number {
    let n = 0;
    for (const table of this.sessions.values()) n += table.size;
    return n;
  }

  private tableOf(conn: ControlPlaneLink): Map<number, TerminalSession> {
    let table = this.sessions.get(conn);
    if (!table) {
      const created = new Map<number, TerminalSession>();
      this.sessions.set(conn, created);
      void conn.ended.then(() => {
        for (const s of created.values()) s.hangUp();
        this.sessions.delete(conn);
      });
      table = created;
    }
    return table;
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
function signalNumber(name: string): number {
  return SIGNALS[name] ?? 0;
}

