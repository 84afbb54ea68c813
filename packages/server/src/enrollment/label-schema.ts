import { z } from '@hono/zod-openapi';

/** Label keys: 1–63 of `a-z 0-9 . _ / -`, starting and ending alphanumeric (docs/api.md, "Fleets"). */
const LABEL_KEY = /^[a-z0-9](?:[a-z0-9._/-]{0,61}[a-z0-9])?$/;
/** Values: up to 63 printable characters. */
const LABEL_VALUE = /^[\x20-\x7e]{0,63}$/;
/** The agent's own read-only labels live under this prefix. */
export const RESERVED_LABEL_PREFIX = 'mm/';

/** A `{ key: value }` label map as people may set it (no `mm/` keys, at most 32). */
export const LabelsSchema = z
  .record(z.string(), z.string())
  .superRefine((labels, ctx) => {
    const keys = Object.keys(labels);
    if (keys.length > 32) ctx.addIssue({ code: 'custom', message: 'at most 32 labels' });
    for (const key of keys) {
      if (!LABEL_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'keys are 1-63 of a-z 0-9 . _ / -, starting and ending with a letter or digit' });
      else if (key.startsWith(RESERVED_LABEL_PREFIX)) ctx.addIssue({ code: 'custom', path: [key], message: `the ${RESERVED_LABEL_PREFIX} prefix is the agent's own` });
      if (!LABEL_VALUE.test(labels[key]!)) ctx.addIssue({ code: 'custom', path: [key], message: 'values are up to 63 printable characters' });
    }
  })
  .openapi({ example: { site: 'lab-2', rack: 'a' } });
