import { z } from '@hono/zod-openapi';

/** One metric's summary over repeated runs (docs/results.md). */
export const SummarySchema = z
  .object({
    n: z.number().int(),
    median: z.number(),
    q1: z.number(),
    q3: z.number(),
    ci95: z.tuple([z.number(), z.number()]).openapi({ description: '95 % interval of the median (exact, from order statistics); with n < 6 the range' }),
  })
  .openapi('MetricSummary');

/** What a result depends on (`result.context`). */
export const RunContextSchema = z
  .object({
    files: z.record(z.string(), z.string()).openapi({ description: 'file kind → sha256' }),
    board_id: z.string().nullable(),
    board_model: z.string().nullable(),
    active_pac: z.string().nullable(),
    app: z.string().nullable(),
    dpu_fingerprint: z.string().nullable(),
    dpu_mhz: z.number().nullable(),
    agent_version: z.string().nullable(),
    runner_version: z.string().nullable(),
    start_temperature_c: z.number().nullable(),
  })
  .openapi('RunContext');
