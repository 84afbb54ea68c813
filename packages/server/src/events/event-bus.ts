import { EventEmitter } from 'node:events';

/**
 * The small typed messages the server's parts tell each other about, shared by every
 * replica when there are several (pg-event-bus.ts): a board's presence changing, the work
 * one replica asks of the replica that holds a board's link, and so on.
 *
 * The bus knows no domain type: a module that has topics of its own adds them to this
 * interface where it defines their messages (declaration merging, as
 * operations/operation-bus-topics.ts does for `operation.*`), so the bus depends on nobody.
 */
export interface BusMessages {
  /**
   * `online`: the board said hello and it was settled; `offline`: its live link closed;
   * `ready`: it may take work again (back from a reboot, or the reboot wait ended).
   */
  'board.status': {
    boardId: string;
    status: 'online' | 'offline' | 'ready';
    /** `online`: the boot id of its hello, the replica holding the link and since when (ISO). */
    bootId?: string;
    replicaId?: string;
    connectedAt?: string;
  };
  /** The board has queued work: whichever replica holds its link starts the next operation. */
  'board.work': { boardId: string };
  /** The board was deleted: every replica closes its links. */
  'board.revoked': { boardId: string };
  /** A synchronous call (board_calls row) waits for the replica holding the board's link. */
  'board.call': { callId: number; boardId: string };
  /** The answer of a board_calls row is stored (scope: the call id). */
  'board.call.answer': { callId: number };
  /** A replica's clients want a device-script stream of a board linked elsewhere (relay_subscriptions). */
  'relay.want': { boardId: string; scriptId: string; port: number; path: string };
  /** The upstream of a shared device-script stream sent something (relay_events). */
  'relay.event': { boardId: string; scriptId: string };
  /** A replica's viewers want (or no longer want) a camera of a board linked elsewhere; repeated every few seconds. */
  'camera.want': { boardId: string; scriptId: string; port: number; replicaId: string; wanted: boolean };
  /** The newest frame (or problem) of a shared camera was stored (camera_frames). */
  'camera.frame': { boardId: string; scriptId: string };
}

export type BusTopic = keyof BusMessages;

/**
 * A topic whose messages are stored rows, numbered per scope (operation events): a bus
 * shared between replicas sends only scope and seq range and the others read them back.
 * Its owner (operations/operation-bus-topics.ts) says how.
 */
export interface ReplayedTopic<T extends BusTopic = BusTopic> {
  topic: T;
  /** The message's position in its scope (1, 2, 3…). */
  seqOf(message: BusMessages[T]): number;
  /** The stored messages of a scope after `afterSeq`, in order, at most `limit`. */
  read(scope: number, afterSeq: number, limit: number): Promise<Array<BusMessages[T]>>;
}

/** Which messages of a topic a subscriber wants: those of one operation or board, or all. */
export type BusScope = string | number | undefined;

export interface EventBus {
  /** Delivers the message to the topic's subscribers of its scope and to those of every scope. */
  publish<T extends BusTopic>(topic: T, scope: string | number, message: BusMessages[T]): void;
  /** Returns the unsubscribe function. */
  subscribe<T extends BusTopic>(topic: T, scope: BusScope, listener: (message: BusMessages[T]) => void): () => void;
}

/**
 * The bus of one process: delivery is synchronous, in publish order. A listener that
 * throws does not keep the message from the others (the error is reported once, via
 * `onListenerError`).
 */
export class InProcessEventBus implements EventBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  constructor(private readonly onListenerError: (err: unknown, topic: BusTopic) => void = () => {}) {}

  publish<T extends BusTopic>(topic: T, scope: string | number, message: BusMessages[T]): void {
    for (const key of [channel(topic, scope), channel(topic, undefined)]) {
      for (const listener of this.emitter.listeners(key) as Array<(m: BusMessages[T]) => void>) {
        try {
          listener(message);
        } catch (err) {
          this.onListenerError(err, topic);
        }
      }
    }
  }

  /** Delivers to the subscribers of this scope only, not to those of every scope (another replica's operation events). */
  deliverScoped<T extends BusTopic>(topic: T, scope: string | number, message: BusMessages[T]): void {
    for (const listener of this.emitter.listeners(channel(topic, scope)) as Array<(m: BusMessages[T]) => void>) {
      try {
        listener(message);
      } catch (err) {
        this.onListenerError(err, topic);
      }
    }
  }

  subscribe<T extends BusTopic>(topic: T, scope: BusScope, listener: (message: BusMessages[T]) => void): () => void {
    const key = channel(topic, scope);
    this.emitter.on(key, listener);
    return () => this.emitter.off(key, listener);
  }

  /** Subscribers right now (tests: nothing leaks). */
  listenerCount(topic: BusTopic, scope?: BusScope): number {
    return this.emitter.listenerCount(channel(topic, scope));
  }
}

function channel(topic: BusTopic, scope: BusScope): string {
  return scope === undefined ? `${topic}|*` : `${topic}|${String(scope)}`;
}
