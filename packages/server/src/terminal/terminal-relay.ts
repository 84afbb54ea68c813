import type WebSocket from 'ws';
import { LinkFeature, systemClock, TERMINAL_CHUNK_BYTES, TERMINAL_WINDOW_BYTES, type Clock, type MessageOf } from '@mm/protocol';
import type { BoardLink, RelayMessage } from '../agent-link/board-link.ts';
import type { BoardLinks } from '../agent-link/board-links.ts';
import type { AgentHub } from '../agent-link/hub.ts';
import type { AuditLog } from '../auth/audit.ts';
import { ForbiddenError } from '../auth/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { boardOffline } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { AsciicastRecorder } from './asciicast.ts';
import { noReservations, type ReservationCheck } from './reservation-check.ts';
import type { TerminalStore } from './terminal-store.ts';

const TERMINAL_MESSAGE_TYPES = ['term.data', 'term.ack', 'term.exit'] as const;

export interface TerminalRelayDeps {
  hub: AgentHub;
  links: BoardLinks;
  store: TerminalStore;
  audit: AuditLog;
  log: Logger;
  replicaId: string;
  /** MM_TERMINAL_RECORDING_MAX_KB in bytes (0: nothing recorded). */
  recordingMaxBytes: number;
  /** Who holds which board (the reservations service); default: nobody, so admins only. */
  reservations?: ReservationCheck;
  clock?: Clock;
  /** Terminal bytes each way not yet passed on (the window of `term.open`). */
  windowBytes?: number;
}

/** Who opens a session, from where (for the audit log and the session's row). */
export interface TerminalOpener {
  principal: Principal;
  ip: string | null;
  requestId: string | null;
}

/** What the client hears last, as a text frame: `{ "type": "exit", "code", "reason"?, "message"? }`. */
interface ExitFrame {
  type: 'exit';
  code: number | null;
  reason?: string;
  message?: string;
}

/** One terminal: the client's WebSocket on one side, a board's link on the other. */
class Session {
  /** Keystrokes sent to the agent it has not acknowledged: past the window, the client's socket is paused. */
  inputUnacked = 0;
  paused = false;
  ended = false;
  rowId: Promise<string | undefined>;
  readonly recorder: AsciicastRecorder | undefined;
  readonly startedAt: number;

  constructor(
    readonly termId: number,
    readonly conn: BoardLink,
    readonly client: WebSocket,
    readonly opener: TerminalOpener,
    readonly board: { id: string; name: string },
    public cols: number,
    public rows: number,
    startedAt: number,
    recordingMaxBytes: number,
    rowId: Promise<string | undefined>,
  ) {
    this.startedAt = startedAt;
    this.rowId = rowId;
    this.recorder =
      recordingMaxBytes > 0
        ? new AsciicastRecorder(startedAt, { cols, rows, title: `${board.name} — ${opener.principal.username ?? 'anonymous'}` }, recordingMaxBytes)
        : undefined;
  }
}

/**
 * Terminals on boards (docs/terminal.md): the route checks who may and whether the board
 * gives terminals, then hands the client's WebSocket here. Each session is `term.*` messages
 * on the board's link, with a window each way: the agent sends at most the window of output
 * before the server acknowledges it, and the server acknowledges only what the client's
 * socket has written, so a `yes` flood waits on the board, not in this server's memory; keys
 * the agent has not taken pause the client's socket likewise. Every session is audited
 * (`terminal.open`, `terminal.close`) and recorded (asciicast v2) in `terminal_sessions`.
 */
export class TerminalRelay {
  private readonly sessions = new Map<number, Session>();
  private readonly watched = new WeakSet<BoardLink>();
  private nextId = 1;
  private readonly clock: Clock;
  private readonly window: number;
  private closing = false;
  private readonly writes = new Set<Promise<void>>();
  reservations: ReservationCheck;

  constructor(private readonly deps: TerminalRelayDeps) {
    this.clock = deps.clock ?? systemClock;
    this.window = deps.windowBytes ?? TERMINAL_WINDOW_BYTES;
    this.reservations = deps.reservations ?? noReservations;
    deps.hub.handleMessages(TERMINAL_MESSAGE_TYPES, (conn, m) => this.onAgentMessage(conn, m));
  }

  /** Sessions open on this replica (tests, diagnostics). */
  get count(): number {
    return this.sessions.size;
  }

  /**
   * The refusals before the upgrade, in order: 403 `reservation_required` (neither an admin
   * nor the holder of the board's reservation), 503 `board_offline`, 403 `terminal_disabled`.
   * Answers the board's link.
   */
  async check(board: { id: string; name: string }, principal: Principal): Promise<BoardLink> {
    if (principal.role !== 'admin') {
      const holds = principal.userId !== null && (await this.reservations.holds(principal.userId, board.id));
      if (!holds) throw new ForbiddenError('A terminal needs the board’s reservation: reserve the board first (mm reserve), or ask an admin.', 'reservation_required');
    }
    const conn = this.deps.links.connection(board.id);
    if (!conn?.isReady) {
      const elsewhere = await this.deps.links.holderElsewhere(board.id);
      throw boardOffline(
        board.id,
        elsewhere ? 'The board is linked to another server replica: open the terminal through that replica (or again once the board links here).' : 'The board is not connected.',
      );
    }
    if (!conn.hello?.features?.includes(LinkFeature.terminal)) {
      throw new ForbiddenError('This board refuses terminals (its agent has MM_TERMINAL=off, runs as root or as a user with no login shell and no MM_TERMINAL_USER, or is too old; its log says which).', 'terminal_disabled');
    }
    return conn;
  }

  /** Starts a session on an upgraded client socket. */
  open(client: WebSocket, conn: BoardLink, board: { id: string; name: string }, size: { cols: number; rows: number }, opener: TerminalOpener): void {
    const termId = this.nextId++;
    const startedAt = this.clock.now();
    const { principal } = opener;
    const rowId = this.deps.store
      .create({
        boardId: board.id,
        boardName: board.name,
        userId: principal.userId,
        username: principal.username,
        startedAt: new Date(startedAt),
        cols: size.cols,
        rows: size.rows,
        replicaId: this.deps.replicaId,
      })
      .catch((err: unknown) => {
        this.deps.log.error({ err, board_id: board.id }, 'could not record a terminal session');
        return undefined;
      });
    const s = new Session(termId, conn, client, opener, board, size.cols, size.rows, startedAt, this.deps.recordingMaxBytes, rowId);
    this.sessions.set(termId, s);
    this.watch(conn);
    void rowId.then((id) =>
      this.deps.audit.record({
        action: 'terminal.open',
        target: `board ${board.id}`,
        actor: principal,
        ip: opener.ip,
        requestId: opener.requestId,
        detail: { session_id: id ?? null, name: board.name, cols: size.cols, rows: size.rows },
      }),
    );
    this.deps.log.info({ board_id: board.id, term_id: termId, user: principal.username }, 'terminal session opened');
    client.on('message', (data, isBinary) => this.fromClient(s, data as Buffer | Buffer[] | ArrayBuffer, isBinary));
    client.on('close', () => this.end(s, { code: null, reason: 'client_left' }, false));
    client.on('error', () => {});
    conn.sendMessage({ type: 'term.open', term_id: termId, cols: size.cols, rows: size.rows, window: this.window });
  }

  /** Shutdown: every session ends (`server_stopping`); waits for their rows. */
  async close(): Promise<void> {
    this.closing = true;
    for (const s of [...this.sessions.values()]) {
      this.end(s, { code: null, reason: 'server_stopping', message: 'The server is stopping: the session ended. Open it again in a moment.' }, true);
    }
    await Promise.all([...this.writes]);
  }

  // ── client → board ───────────────────────────────────────────────────────────────

  private fromClient(s: Session, data: Buffer | Buffer[] | ArrayBuffer, isBinary: boolean): void {
    if (s.ended) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (!isBinary) {
      let m: unknown;
      try {
        m = JSON.parse(bytes.toString('utf8'));
      } catch {
        return;
      }
      const r = m as { type?: unknown; cols?: unknown; rows?: unknown };
      if (r.type === 'resize' && isSize(r.cols) && isSize(r.rows)) {
        s.cols = r.cols;
        s.rows = r.rows;
        s.recorder?.resize(this.clock.now(), r.cols, r.rows);
        s.conn.sendMessage({ type: 'term.resize', term_id: s.termId, cols: r.cols, rows: r.rows });
      }
      return;
    }
    for (let at = 0; at < bytes.length; at += TERMINAL_CHUNK_BYTES) {
      const piece = bytes.subarray(at, at + TERMINAL_CHUNK_BYTES);
      s.conn.sendMessage({ type: 'term.data', term_id: s.termId, data: piece.toString('base64') });
      s.inputUnacked += piece.length;
    }
    if (s.inputUnacked >= this.window && !s.paused) {
      s.paused = true;
      s.client.pause();
    }
  }

  // ── board → client ───────────────────────────────────────────────────────────────

  private onAgentMessage(conn: BoardLink, m: RelayMessage): void {
    if (m.type !== 'term.data' && m.type !== 'term.ack' && m.type !== 'term.exit') return;
    const s = this.sessions.get(m.term_id);
    if (!s || s.conn !== conn) {
      if (m.type === 'term.data' && conn.isOpen) conn.sendMessage({ type: 'term.close', term_id: m.term_id });
      return;
    }
    switch (m.type) {
      case 'term.data':
        return this.toClient(s, m);
      case 'term.ack':
        s.inputUnacked = Math.max(0, s.inputUnacked - m.bytes);
        if (s.paused && s.inputUnacked < this.window) {
          s.paused = false;
          s.client.resume();
        }
        return;
      case 'term.exit':
        return this.end(s, exitOf(m), true);
    }
  }

  private toClient(s: Session, m: MessageOf<'term.data'>): void {
    const bytes = Buffer.from(m.data, 'base64');
    s.recorder?.output(this.clock.now(), bytes);
    if (s.client.readyState !== s.client.OPEN) return;
    // Acknowledged once the client's socket has written it: a slow client holds the board back.
    s.client.send(bytes, { binary: true }, (err) => {
      if (!err && s.conn.isOpen && !s.ended) s.conn.sendMessage({ type: 'term.ack', term_id: s.termId, bytes: bytes.length });
    });
  }

  // ── the end ──────────────────────────────────────────────────────────────────────

  /** Every session on a link that closed ends: the board rebooted (a PAC activation) or its link dropped or moved. */
  private watch(conn: BoardLink): void {
    if (this.watched.has(conn)) return;
    this.watched.add(conn);
    void conn.closed.then(() => {
      const rebooting = this.deps.links.status(conn.boardId) === 'rebooting';
      for (const s of [...this.sessions.values()]) {
        if (s.conn !== conn) continue;
        this.end(
          s,
          rebooting
            ? { code: null, reason: 'board_rebooting', message: 'The board is rebooting (a PAC activation): the session ended. Open a new one once the board is back.' }
            : { code: null, reason: 'link_lost', message: 'The link to the board dropped (it went offline, or its link moved to another server replica): the session ended. Open it again.' },
          true,
        );
      }
    });
  }

  /**
   * Ends a session once: the agent is told (unless it ended there), the client hears the exit
   * frame and its socket closes (unless it left), the row gets its end and recording, and the
   * audit log `terminal.close`.
   */
  private end(s: Session, end: Omit<ExitFrame, 'type'>, tellClient: boolean): void {
    const exit: ExitFrame = { type: 'exit', ...end };
    if (s.ended) return;
    s.ended = true;
    this.sessions.delete(s.termId);
    if (exit.reason !== 'exited' && exit.reason !== 'board_rebooting' && exit.reason !== 'link_lost' && s.conn.isOpen) {
      s.conn.sendMessage({ type: 'term.close', term_id: s.termId });
    }
    if (tellClient && s.client.readyState === s.client.OPEN) {
      s.client.send(JSON.stringify(exit));
      s.client.close(1000, (exit.reason ?? 'exited').slice(0, 100));
    }
    const endedAt = this.clock.now();
    const reason = exit.reason ?? 'exited';
    this.deps.log.info({ board_id: s.board.id, term_id: s.termId, reason, code: exit.code }, 'terminal session ended');
    const write = (async () => {
      const id = await s.rowId;
      const recording = s.recorder?.finish() ?? Buffer.alloc(0);
      if (id) {
        await this.deps.store
          .finish(id, { endedAt: new Date(endedAt), exitCode: exit.code, endReason: reason, recording, truncated: s.recorder?.truncated ?? false })
          .catch((err: unknown) => this.deps.log.error({ err, session_id: id }, 'could not store the end of a terminal session'));
      }
      await this.deps.audit.record({
        action: 'terminal.close',
        target: `board ${s.board.id}`,
        actor: s.opener.principal,
        ip: s.opener.ip,
        requestId: s.opener.requestId,
        detail: { session_id: id ?? null, name: s.board.name, reason, exit_code: exit.code, duration_s: Math.round((endedAt - s.startedAt) / 100) / 10 },
      });
    })();
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }
}

function isSize(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 1000;
}

function exitOf(m: MessageOf<'term.exit'>): Omit<ExitFrame, 'type'> {
  if (!m.error) return { code: m.code, reason: 'exited' };
  return { code: m.code, reason: m.error.code, message: m.error.message };
}

