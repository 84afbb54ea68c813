import { z } from '@hono/zod-openapi';

/** A board's telemetry sample as the API shows it (the board's `telemetry`, `GET …/telemetry/`'s samples). */
export const TelemetrySampleSchema = z
  .object({
    at: z.string().openapi({ description: 'When the server received it.' }),
    temperatures_c: z.record(z.string(), z.number()).openapi({
      description: 'Degrees Celsius by sensor: `<hwmon name>.<label or tempN>`, e.g. `ams.ps_temp`, `ams.pl_temp`; invalid reads are left out.',
    }),
    power_w: z.number().optional().openapi({ description: 'Board power from its `ina260` monitors, where it has any.' }),
    memory_used_bytes: z.number().int(),
    load_1m: z.number(),
    disk_free_bytes: z.number().int().openapi({ description: 'Free space of the file system holding MM_AGENT_DIR.' }),
  })
  .openapi('TelemetrySample', {
    example: {
      at: '2026-11-27T04:00:00.000Z',
      temperatures_c: { 'ams.ps_temp': 48.2, 'ams.pl_temp': 52.9 },
      power_w: 6.7,
      memory_used_bytes: 812_000_000,
      load_1m: 0.4,
      disk_free_bytes: 21_000_000_000,
    },
  });
