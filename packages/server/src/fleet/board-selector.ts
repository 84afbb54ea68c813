import { z } from '@hono/zod-openapi';
import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { RESERVED_LABEL_PREFIX } from '../enrollment/label-schema.ts';

/**
 * A board selector (docs/api.md, "Fleets"): `{ key: value, ... }`; it matches a board whose
 * labels hold every pair. Read-only `mm/` labels may be selected on (`mm/arch=arm64`).
 * `{}` matches every board.
 *
 * A board's `labels` column holds both kinds of label: the ones people set and the agent's
 * `mm/` ones (mergeLabels), so one `labels @> selector` (a GIN index) answers a match.
 */
const SELECTOR_KEY = /^[a-z0-9](?:[a-z0-9._/-]{0,61}[a-z0-9])?$/;
const SELECTOR_VALUE = /^[\x20-\x7e]{0,63}$/;

export type BoardSelector = Record<string, string>;

export const BoardSelectorSchema = z
  .record(z.string(), z.string())
  .superRefine((selector, ctx) => {
    const keys = Object.keys(selector);
    if (keys.length > 32) ctx.addIssue({ code: 'custom', message: 'at most 32 pairs' });
    for (const key of keys) {
      if (!SELECTOR_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'keys are 1-63 of a-z 0-9 . _ / -, starting and ending with a letter or digit' });
      if (!SELECTOR_VALUE.test(selector[key]!)) ctx.addIssue({ code: 'custom', path: [key], message: 'values are up to 63 printable characters' });
    }
  })
  .openapi({ example: { 'mm/board-model': 'kv260', camera: 'yes' } });

/** Whether a board with these labels is matched by the selector. */
export function matchesSelector(labels: Record<string, string>, selector: BoardSelector): boolean {
  for (const [key, value] of Object.entries(selector)) if (labels[key] !== value) return false;
  return true;
}

/** SQL: the labels column holds every pair of the selector. */
export function selectorMatchesSql(labelsColumn: AnyPgColumn, selector: BoardSelector): SQL {
  return sql`${labelsColumn} @> ${JSON.stringify(selector)}::jsonb`;
}

/** Labels people set (no `mm/` keys) plus the agent's own `mm/` labels: what the column stores. */
export function mergeLabels(userLabels: Record<string, string>, agentLabels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(userLabels)) if (!k.startsWith(RESERVED_LABEL_PREFIX)) out[k] = v;
  for (const [k, v] of Object.entries(agentLabels)) if (k.startsWith(RESERVED_LABEL_PREFIX)) out[k] = v;
  return out;
}

/** The `mm/` part of a stored label map. */
export function agentLabelsOf(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([k]) => k.startsWith(RESERVED_LABEL_PREFIX)));
}

/** The part people set. */
export function userLabelsOf(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([k]) => !k.startsWith(RESERVED_LABEL_PREFIX)));
}
