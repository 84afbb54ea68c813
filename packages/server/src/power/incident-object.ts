import { z } from '@hono/zod-openapi';
import type { IncidentRow } from './power-store.ts';

/** An incident as the API shows it (`GET /api/boards/<id>/incidents/`, docs/power.md). */
export const IncidentSchema = z
  .object({
    id: z.number().int(),
    board_id: z.string().uuid(),
    started_at: z.string().openapi({ description: 'When the hang began: the board was last heard from, or its run passed its bound' }),
    detected_at: z.string().openapi({ description: 'When the board was marked `unresponsive`' }),
    reason: z.string().openapi({ description: 'Why it was found hung' }),
    phase: z.enum(['detected', 'cycling', 'booting', 'checking', 'closed']).openapi({ description: 'Where the recovery is' }),
    actions: z
      .array(
        z.object({
          at: z.string(),
          action: z.enum(['power_cycle', 'health_check']),
          operation_ids: z.array(z.number().int()),
          outcome: z.string().optional(),
        }),
      )
      .openapi({ description: 'What the recovery did, in order: power cycles and health-check runs (their operations)' }),
    recovered_at: z.string().nullable().openapi({ description: 'When it was back in service (its health checks passed)' }),
    outcome: z
      .enum(['recovered', 'bad', 'resolved'])
      .nullable()
      .openapi({ description: 'null while open; `recovered` back in service, `bad` recovery gave up (the board is `bad`), `resolved` closed by a person' }),
    recovery_seconds: z.number().nullable().openapi({ description: 'From `started_at` to `recovered_at` (the MTTR of this incident)' }),
  })
  .openapi('Incident');

export type IncidentObject = z.infer<typeof IncidentSchema>;

export function toIncidentObject(row: IncidentRow): IncidentObject {
  return {
    id: row.id,
    board_id: row.boardId,
    started_at: row.startedAt.toISOString(),
    detected_at: row.detectedAt.toISOString(),
    reason: row.reason,
    phase: row.phase,
    actions: row.actions,
    recovered_at: row.recoveredAt ? row.recoveredAt.toISOString() : null,
    outcome: row.outcome ?? null,
    recovery_seconds: row.recoveredAt ? (row.recoveredAt.getTime() - row.startedAt.getTime()) / 1000 : null,
  };
}
