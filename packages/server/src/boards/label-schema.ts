import { z } from '@hono/zod-openapi';

/** Label keys: 1–63 of `a-z 0-9 . _ / -`, starting and ending alphanumeric (docs/api.md, "Fleets"). */
const LABEL_KEY = /^[a-z0-9](?:[a-z0-9._/-]{0,61}[a-z0-9])?$/;
/** Values: up to 63 printable characters. */
const LABEL_VALUE = /^[\x20-\x7e]{0,63}$/;
/** The agent's own read-only labels live under this prefix. */
export const RESERVED_LABEL_PREFIX = 'mm/';
/** The most pairs a label map or a selector holds. */
export const MAX_LABELS = 32;

const KEY_RULE = 'keys are 1-63 of a-z 0-9 . _ / -, starting and ending with a letter or digit';
const VALUE_RULE = 'values are up to 63 printable characters';

/** Why `key` is no label key people may use (`reserved`: whether `mm/` keys are allowed), or undefined. */
export function labelKeyProblem(key: string, allowReserved: boolean): string | undefined {
  if (!LABEL_KEY.test(key)) return KEY_RULE;
  if (!allowReserved && key.startsWith(RESERVED_LABEL_PREFIX)) return `the ${RESERVED_LABEL_PREFIX} prefix is the agent's own`;
  return undefined;
}

export const labelValueProblem = (value: string): string | undefined => (LABEL_VALUE.test(value) ? undefined : VALUE_RULE);

/** A label map or selector as the server keeps it: no inherited names, so no key means anything but itself. */
export type LabelMap = Record<string, string>;

/**
 * The prototype of every parsed label map: empty, frozen, and itself without a prototype.
 * A map made on it answers only its own keys (`constructor`, `toString`, `__proto__` are
 * nothing unless set), as `Object.create(null)` would; but drizzle, which reads a value's
 * prototype's `constructor` before storing it, throws on a map with no prototype at all.
 */
const NO_INHERITED_NAMES: object = Object.freeze(Object.create(null));

export const nullPrototypeMap = (entries: Iterable<[string, string]>): LabelMap => {
  const out = Object.create(NO_INHERITED_NAMES) as LabelMap;
  for (const [k, v] of entries) out[k] = v;
  return out;
};

/**
 * A `{ key: value }` map from a request, checked against the label rules on the request's
 * own keys and parsed into a null-prototype object (issue 46). zod's record (as a plain
 * object would) silently drops a `__proto__` key: `{"__proto__": "nomatch"}` became `{}`,
 * a selector matching every board. Its keys are now checked as sent, so `__proto__` (which
 * breaks the key rule) is a 400 like any other bad key.
 */
export function labelMapSchema(opts: { allowReserved: boolean; noun: string }) {
  return z
    .preprocess(
      (raw, ctx) => {
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw; // the record says why
        const keys = Object.keys(raw);
        if (keys.length > MAX_LABELS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_LABELS} ${opts.noun}`, input: raw });
        for (const key of keys) {
          const problem = labelKeyProblem(key, opts.allowReserved);
          if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem, input: raw });
        }
        return raw;
      },
      z.record(z.string(), z.string()).superRefine((map, ctx) => {
        for (const [key, value] of Object.entries(map)) {
          const problem = labelValueProblem(value);
          if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
        }
      }),
    )
    .transform((map) => nullPrototypeMap(Object.entries(map)));
}

/** A `{ key: value }` label map as people may set it (no `mm/` keys, at most 32). */
export const LabelsSchema = labelMapSchema({ allowReserved: false, noun: 'labels' }).openapi({ example: { site: 'lab-2', rack: 'a' } });
