import { systemClock, type Clock, type MessageOf } from '@mm/protocol';
import type { BoardLink } from '../agent-link/board-link.ts';
import type { AgentHub } from '../agent-link/hub.ts';
import type { Db } from '../db/database.ts';
import type { TelemetrySample } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import type { BoardTelemetryGauges } from '../metrics/server-metrics.ts';
import { recordTelemetry, TELEMETRY_KEEP_MS, telemetrySince } from './telemetry-store.ts';

/** Samples of one link closer together than this are dropped (an agent set to a tiny interval cannot flood the database). */
export const MIN_SAMPLE_GAP_MS = 1000;

interface LinkedBoard {
  link: BoardLink;
  latest: TelemetrySample;
  lastAcceptedAt: number;
  /** A write of this board is in flight: a newer sample waits here (only the newest). */
  writing: boolean;
  pending: TelemetrySample | undefined;
}

export interface BoardTelemetryDeps {
  db: Db;
  hub: AgentHub;
  log: Logger;
  clock?: Clock;
}

/**
 * Board telemetry on the server: takes the agents' `board.telemetry` messages, stamps each
 * with the time it arrived, stores it as the board's latest and as the sample of its minute
 * (kept 24 h; the retention pruner removes older ones), and serves the gauges of the boards
 * whose link this replica holds. With several replicas each exports only its own boards'
 * gauges (with its `replica` label): a board is counted once, by the replica it talks to.
 */
export class BoardTelemetryService {
  private readonly clock: Clock;
  private readonly boards = new Map<string, LinkedBoard>();

  constructor(private readonly deps: BoardTelemetryDeps) {
    this.clock = deps.clock ?? systemClock;
    deps.hub.handleMessages(['board.telemetry'], (link, message) => {
      if (message.type === 'board.telemetry') this.onTelemetry(link, message);
    });
  }

  /** The board's per-minute samples since `since` (at most the last 24 h), oldest first. */
  async samples(boardId: string, since: Date | undefined): Promise<TelemetrySample[]> {
    const floor = this.clock.now() - TELEMETRY_KEEP_MS;
    const from = since && since.getTime() > floor ? since : new Date(floor);
    return telemetrySince(this.deps.db, boardId, from);
  }

  /** The latest sample of every board linked to this replica now (the Prometheus gauges). */
  gauges(): BoardTelemetryGauges[] {
    const out: BoardTelemetryGauges[] = [];
    for (const [boardId, b] of this.boards) {
      if (!b.link.isOpen) {
        this.boards.delete(boardId);
        continue;
      }
      out.push({ board: boardId, temperatures_c: b.latest.temperatures_c, ...(b.latest.power_w !== undefined ? { power_w: b.latest.power_w } : {}) });
    }
    return out;
  }

  private onTelemetry(link: BoardLink, message: MessageOf<'board.telemetry'>): void {
    const now = this.clock.now();
    let board = this.boards.get(link.boardId);
    if (board && board.link === link && now - board.lastAcceptedAt < MIN_SAMPLE_GAP_MS) {
      link.log.debug('telemetry sample too soon after the last one: dropped');
      return;
    }
    const sample: TelemetrySample = { at: new Date(now).toISOString(), ...message.reading };
    if (!board) {
      board = { link, latest: sample, lastAcceptedAt: now, writing: false, pending: undefined };
      this.boards.set(link.boardId, board);
    }
    // A newer connection of the board takes over its entry (writes in flight carry on).
    board.link = link;
    board.latest = sample;
    board.lastAcceptedAt = now;
    if (board.writing) {
      board.pending = sample;
      return;
    }
    void this.write(link.boardId, board, sample);
  }

  private async write(boardId: string, board: LinkedBoard, sample: TelemetrySample): Promise<void> {
    board.writing = true;
    try {
      for (let next: TelemetrySample | undefined = sample; next; next = board.pending, board.pending = undefined) {
        await recordTelemetry(this.deps.db, boardId, next).catch((err: unknown) => board.link.log.warn({ err }, 'could not store a telemetry sample'));
      }
    } finally {
      board.writing = false;
    }
  }
}
