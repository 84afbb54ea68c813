import { z } from '@hono/zod-openapi';
import { BoardSelectorSchema } from '../boards/board-selector.ts';
import type { ReservationRow } from './reservation-store.ts';

export const RESERVATION_STATUSES = ['waiting', 'active', 'ended'] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/** A reservation as the API shows it (docs/reservations.md). */
export interface ReservationObject {
  id: number;
  board_id: string | null;
  board_name: string | null;
  board_selector: Record<string, string> | null;
  user: string | null;
  note: string;
  status: ReservationStatus;
  duration_s: number;
  requested_at: string;
  wait_until: string;
  starts_at: string | null;
  ends_at: string | null;
  ended_at: string | null;
  end_reason: string | null;
  ended_by: string | null;
  /** While waiting: its place in its line (1 first) and when it may expect its board (null: unknown). */
  position: number | null;
  estimated_start_at: string | null;
}

/** The row as it stands at `at`: a lease past its end is `ended` (`expired`) even before the sweep said so. */
export function toReservationObject(
  row: ReservationRow,
  at: number,
  extra: { boardName?: string | null; position?: number | null; estimate?: number | null } = {},
): ReservationObject {
  let status = row.status;
  let endedAt = row.endedAt;
  let endReason = row.endReason;
  if (status === 'active' && row.endsAt && row.endsAt.getTime() <= at) {
    status = 'ended';
    endedAt = row.endsAt;
    endReason = 'expired';
  } else if (status === 'waiting' && row.waitUntil.getTime() <= at) {
    status = 'ended';
    endedAt = row.waitUntil;
    endReason = 'wait_timeout';
  }
  const waiting = status === 'waiting';
  return {
    id: row.id,
    board_id: row.boardId,
    board_name: extra.boardName ?? null,
    board_selector: row.boardSelector ?? null,
    user: row.username,
    note: row.note,
    status,
    duration_s: row.durationS,
    requested_at: row.requestedAt.toISOString(),
    wait_until: row.waitUntil.toISOString(),
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    ended_at: endedAt?.toISOString() ?? null,
    end_reason: endReason,
    ended_by: row.endedBy,
    position: waiting ? (extra.position ?? null) : null,
    estimated_start_at: waiting && extra.estimate != null ? new Date(extra.estimate).toISOString() : null,
  };
}

export const ReservationSchema = z
  .object({
    id: z.number().int(),
    board_id: z.string().uuid().nullable().openapi({ description: 'The board held (or named); null while a selector request waits' }),
    board_name: z.string().nullable(),
    board_selector: z.record(z.string(), z.string()).nullable().openapi({ description: 'A request for any idle board matching these labels' }),
    user: z.string().nullable().openapi({ description: 'Who holds it (a username, `MM_API_TOKEN`, or null with auth off)' }),
    note: z.string(),
    status: z.enum(RESERVATION_STATUSES),
    duration_s: z.number().int(),
    requested_at: z.string(),
    wait_until: z.string().openapi({ description: 'A request still waiting then ends (`wait_timeout`)' }),
    starts_at: z.string().nullable(),
    ends_at: z.string().nullable().openapi({ description: 'The lease ends by itself then, unless renewed' }),
    ended_at: z.string().nullable(),
    end_reason: z.enum(['released', 'expired', 'broken', 'cancelled', 'wait_timeout']).nullable().openapi({ description: '`broken`: an admin ended another person\'s lease (audited)' }),
    ended_by: z.string().nullable(),
    position: z.number().int().nullable().openapi({ description: 'While waiting: its place in its line (the board named, or the selector), 1 first' }),
    estimated_start_at: z.string().nullable().openapi({ description: 'While waiting: when the leases ahead of it end, if that can be told' }),
  })
  .openapi('Reservation');

export const ReservationListSchema = z.object({ reservations: z.array(ReservationSchema), total: z.number().int() }).openapi('ReservationList');

export const ReservationCreateSchema = z
  .object({
    board_id: z.string().uuid().optional(),
    board_selector: BoardSelectorSchema.optional(),
    duration_s: z.number().int().min(1),
    note: z.string().max(500).optional(),
    wait_s: z.number().int().min(0).max(7 * 86_400).optional().openapi({ description: 'How long the request may wait for a board (default 3600)' }),
  })
  .openapi('ReservationCreate');
export type ReservationCreate = z.infer<typeof ReservationCreateSchema>;

export const ReservationRenewSchema = z.object({ duration_s: z.number().int().min(1) }).openapi('ReservationRenew');
