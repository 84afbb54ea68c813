import { EventSource, type EventSourceFetchInit } from 'eventsource';
import { systemClock, type Clock, type MessageOf, type TimerHandle } from '@mm/protocol';
import type { ControlPlaneLink } from '../link/control-plane-link.ts';
import type { Logger } from '../logger.ts';
import { portRefusal, SCRIPT_HOST, type ScriptPortPolicy } from './http-relay.ts';

/** First and longest pause before following a stream again after the script refused it for good. */
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 10_000;

/** The fields of a DOM MessageEvent the relay forwards (every event the script sends is one). */
interface ScriptEvent extends Event {
  data: unknown;
  lastEventId: string;
}

function isScriptEvent(e: Event): e is ScriptEvent {
  return 'data' in e && 'lastEventId' in e;
}

/**
 * An EventSource that hands every event the script sends to `onScriptEvent`, whatever its
 * name: EventSource dispatches a named event only to listeners of that name, and the relay
 * does not know the names in advance.
 */
class RelayEventSource extends EventSource {
  onScriptEvent: ((e: ScriptEvent) => void) | undefined;

  override dispatchEvent(event: Event): boolean {
    if (isScriptEvent(event)) this.onScriptEvent?.(event);
    return super.dispatchEvent(event);
  }
}

/**
 * One `sse.subscribe`: follows `http://127.0.0.1:<port><path>` with the eventsource client
 * (which reconnects by itself after a dropped stream, sending `Last-Event-ID`) and forwards
 * each event. A stream refused for good (not 200, not text/event-stream) is retried with a
 * capped backoff, so a script that starts late or restarts is picked up again.
 */
class Subscription {
  private source: RelayEventSource | undefined;
  private reported: 'open' | 'down' | undefined;
  private restartTimer: TimerHandle | undefined;
  private restartDelay = RESTART_FIRST_MS;
  private closed = false;

  constructor(
    readonly id: number,
    private readonly conn: ControlPlaneLink,
    private readonly url: string,
    /** Sent as Last-Event-ID on every new connection, so the script can resume where we were. */
    private lastEventId: string | undefined,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  start(): void {
    if (this.closed) return;
    const source = new RelayEventSource(this.url, { fetch: (url, init) => this.fetch(url, init) });
    this.source = source;
    source.onScriptEvent = (e) => this.forward(e);
    source.addEventListener('open', (e: Event) => {
      if (isScriptEvent(e)) return; // a script event that happens to be called "open"
      this.restartDelay = RESTART_FIRST_MS;
      this.report('open');
    });
    source.addEventListener('error', (e: Event) => {
      if (isScriptEvent(e)) return; // a script event that happens to be called "error"
      const message = (e as Event & { message?: string }).message;
      this.report('down', message);
      if (source.readyState === source.CLOSED) this.restartLater();
    });
  }

  close(): void {
    this.closed = true;
    this.clock.clearTimeout(this.restartTimer);
    this.source?.close();
  }

  /** Only the board's loopback, no redirects (a redirect could lead anywhere). */
  private fetch(url: string | URL, init: EventSourceFetchInit): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.lastEventId !== undefined) headers['Last-Event-ID'] = this.lastEventId;
    return fetch(url, { ...init, headers, redirect: 'error' });
  }

  private forward(e: ScriptEvent): void {
    if (this.closed) return;
    const id = e.lastEventId !== '' ? e.lastEventId : undefined;
    if (id !== undefined) this.lastEventId = id;
    this.conn.sendMessage({
      type: 'sse.event',
      sub_id: this.id,
      ...(id !== undefined ? { id } : {}),
      ...(e.type !== 'message' ? { event: e.type } : {}),
      data: typeof e.data === 'string' ? e.data : String(e.data),
    });
  }

  private report(state: 'open' | 'down', message?: string): void {
    if (this.closed || this.reported === state) return;
    this.reported = state;
    this.log.debug({ sub_id: this.id, url: this.url, state, message }, 'script stream state');
    this.conn.sendMessage({ type: 'sse.status', sub_id: this.id, state, ...(message ? { message } : {}) });
  }

  private restartLater(): void {
    if (this.closed || this.restartTimer) return;
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, RESTART_MAX_MS);
    this.restartTimer = this.clock.setTimeout(() => {
      this.restartTimer = undefined;
      this.source?.close();
      this.start();
    }, delay);
    this.restartTimer.unref();
  }
}

/**
 * The agent's half of the stream relay: `sse.subscribe` / `sse.unsubscribe`, one
 * Subscription each. A closed link ends its subscriptions (the server subscribes again on
 * the next link).
 */
export class SseRelay {
  private readonly byConnection = new Map<ControlPlaneLink, Map<number, Subscription>>();

  constructor(
    private readonly log: Logger,
    private readonly allowedPorts: ScriptPortPolicy,
    private readonly clock: Clock = systemClock,
  ) {}

  subscribe(m: MessageOf<'sse.subscribe'>, conn: ControlPlaneLink): void {
    const table = this.tableOf(conn);
    table.get(m.sub_id)?.close();
    const refusal = portRefusal(m.port, this.allowedPorts);
    if (refusal) {
      // Reported down once and never followed (the server shows the stream's upstream as down).
      table.delete(m.sub_id);
      this.log.warn({ sub_id: m.sub_id, port: m.port }, 'refused to follow a stream on a port not in MM_SCRIPT_PORTS');
      conn.sendMessage({ type: 'sse.status', sub_id: m.sub_id, state: 'down', message: refusal });
      return;
    }
    const sub = new Subscription(m.sub_id, conn, `http://${SCRIPT_HOST}:${m.port}${m.path}`, m.last_event_id, this.log, this.clock);
    table.set(m.sub_id, sub);
    this.log.debug({ sub_id: m.sub_id, port: m.port, path: m.path }, 'following a script stream');
    sub.start();
  }

  unsubscribe(m: MessageOf<'sse.unsubscribe'>, conn: ControlPlaneLink): void {
    const table = this.byConnection.get(conn);
    table?.get(m.sub_id)?.close();
    table?.delete(m.sub_id);
  }

  /** Ends every subscription (agent stopping). */
  closeAll(): void {
    for (const table of this.byConnection.values()) for (const sub of table.values()) sub.close();
    this.byConnection.clear();
  }

  private tableOf(conn: ControlPlaneLink): Map<number, Subscription> {
    let table = this.byConnection.get(conn);
    if (!table) {
      const created = new Map<number, Subscription>();
      this.byConnection.set(conn, created);
      void conn.ended.then(() => {
        for (const sub of created.values()) sub.close();
        this.byConnection.delete(conn);
      });
      table = created;
    }
    return table;
  }
}
