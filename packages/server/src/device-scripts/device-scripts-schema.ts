import { z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';

/**
 * The fields of a device-script catalogue entry and their rules (docs/api.md, "Device scripts"). JSON
 * types are taken as they come: a port of "80" (a string) is refused, not coerced.
 */
const name = safeString()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/\S/, 'must not be blank')
  .openapi({ example: 'GPIO motor and steering servo' });

export const deviceTypeField = z
  .string()
  .max(64, 'must be at most 64 characters')
  .regex(/^[a-z][a-z0-9_-]*$/, 'must be a lowercase word: a letter, then letters, digits, "_" or "-"')
  .openapi({ example: 'gpio' });

const description = safeString().max(10_000, 'must be at most 10000 characters');

const scriptFilename = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^(?!\.{1,2}$)[^/\\\0]+$/, 'must be a plain file name (no "/" or "\\", not "." or "..")')
  .openapi({ example: 'mm-gpio-motor.mjs' });

const remoteDir = z
  .string()
  .max(4096, 'must be at most 4096 characters')
  .regex(/^\/[^\0]*$/, 'must be an absolute path (starting with "/")')
  .openapi({ example: '/opt/model-manager/device-scripts/gpio-motor' });

const port = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be from 1 to 65535')
  .max(65535, 'must be from 1 to 65535')
  .openapi({ example: 8765 });

const version = z
  .string()
  .regex(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/, 'must be a dotted three-part version such as 1.2.0')
  .openapi({ example: '1.0.0' });

// No `i` flag: the OpenAPI document carries only the source, and zod wrote it as `…$/i`, which
// validating clients and gateways read as a literal "/i" and so refused every id.
export const DEVICE_SCRIPT_ID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const fields = {
  name,
  device_type: deviceTypeField,
  description,
  script_filename: scriptFilename,
  remote_dir: remoteDir,
  port,
  version,
};

/** PUT: every field, nothing else (`id` and `updated_at` are the server's). */
export const DeviceScriptReplace = z.strictObject(fields).openapi('DeviceScriptReplace');

/** POST: like PUT, but `description` may be left out (it is then ""). */
export const DeviceScriptCreate = z
  .strictObject({ ...fields, description: description.default('') })
  .openapi('DeviceScriptCreate');

/** PATCH: any subset of the fields; `{}` changes nothing. */
export const DeviceScriptPatch = z.strictObject(fields).partial().openapi('DeviceScriptPatch');

export const DeviceScript = z
  .object({
    id: z.uuid().openapi({ example: '0b6e1c52-4a59-4a27-9b4c-6f1d2d9e8a10' }),
    ...fields,
    updated_at: z.string().openapi({ example: '2026-11-21T10:00:00.000Z', format: 'date-time' }),
  })
  .openapi('DeviceScript');

export type DeviceScriptRecord = z.infer<typeof DeviceScript>;
export type DeviceScriptFields = z.infer<typeof DeviceScriptReplace>;
export type DeviceScriptChanges = z.infer<typeof DeviceScriptPatch>;
