import { z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';

/** What the server read of a `.xmodel` weights file (the file record's `model`). */
export const ModelSummarySchema = z
  .object({
    format: z.literal('xmodel'),
    dpu_subgraphs: z
      .array(
        z.object({
          name: z.string(),
          dpu_fingerprint: z.string().nullable().openapi({ description: 'The DPU the subgraph was compiled for, as `xdputil query` prints fingerprints', example: '0x101000016010407' }),
          dpu_name: z.string().nullable().openapi({ example: 'DPUCZDX8G_ISA1_B4096' }),
        }),
      )
      .openapi({ description: 'The subgraphs that run on the DPU (none: a CPU-only model)' }),
    inputs: z.array(z.object({ name: z.string(), shape: z.array(z.number().int()), dtype: z.string().openapi({ example: 'xint8' }) })),
  })
  .openapi('ModelSummary');

/** One accelerated application as the board lists it. */
export const AppRecordSchema = z
  .object({
    name: z.string().openapi({ example: 'kv260-benchmark-b4096' }),
    type: z.string().openapi({ description: '`Accel_type` of the listing', example: 'XRT_FLAT' }),
    base: z.string().optional(),
    active: z.boolean(),
    slot: z.number().int().optional().openapi({ description: 'The slot it holds, when active' }),
    dpu_fingerprint: z.string().optional().openapi({ description: 'The DPU fingerprint the board showed while this app was last active' }),
  })
  .openapi('AppRecord');

export const DpuFactsSchema = z
  .object({
    arch: z.string().openapi({ example: 'DPUCZDX8G_ISA1_B4096' }),
    fingerprint: z.string().openapi({ example: '0x101000016010407' }),
    frequency_mhz: z.number().optional(),
    cores: z.number().int(),
  })
  .openapi('DpuFacts');

const boardId = z.string().uuid();

/** `GET /api/boards/<id>/apps/` (and the `result` of an `app_query` operation). */
export const BoardAppsSchema = z
  .object({
    board_id: boardId,
    apps: z.array(AppRecordSchema),
    active: z.string().nullable().openapi({ description: "The active app's name, or null" }),
    dpu: DpuFactsSchema.nullable().openapi({ description: 'The DPU as `xdputil query` reports it, or null (no xdputil, or no DPU answering)' }),
    vai_version: z.string().nullable(),
    vart_target: z.string().nullable().openapi({ description: 'The xclbin /etc/vart.conf names' }),
    reported_at: z.string().nullable().openapi({ description: 'When this was last read from the board (null: never; `?refresh=1` asks it now)' }),
  })
  .openapi('BoardApps');
export type BoardApps = z.infer<typeof BoardAppsSchema>;

/** An app name as the API takes it: what the board's listing shows. */
export const AppName = safeString()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((v) => !v.startsWith('-') && !/[/\\]/.test(v), 'must not start with "-" nor hold a slash')
  .openapi({ description: "An accelerated application's name, as the board lists it", example: 'kv260-benchmark-b4096' });
