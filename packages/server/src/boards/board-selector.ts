import { is, SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { labelKeyProblem, labelMapSchema, labelValueProblem, MAX_LABELS, nullPrototypeMap, RESERVED_LABEL_PREFIX } from './label-schema.ts';

/**
 * A board selector (docs/api.md, "Fleets"): `{ key: value, ... }`; it matches a board whose
 * labels hold every pair. Read-only `mm/` labels may be selected on (`mm/arch=arm64`).
 * `{}` matches every board.
 *
 * A board's `labels` column holds both kinds of label: the ones people set and the agent's
 * `mm/` ones (mergeLabels), so one `labels @> selector` (a GIN index) answers a match.
 */
export type BoardSelector = Record<string, string>;

/** Selectors: label pairs, `mm/` keys allowed; parsed into null-prototype maps (label-schema.ts). */
export const BoardSelectorSchema = labelMapSchema({ allowReserved: true, noun: 'pairs' }).openapi({ example: { 'mm/board-model': 'kv260', camera: 'yes' } });

/**
 * `?label=k=v` texts (repeatable) → a selector, each key checked as `BoardSelectorSchema`
 * checks a body's; a problem → its message.
 */
export function selectorFromPairs(texts: string[]): { selector: BoardSelector } | { problem: string } {
  const pairs: Array<[string, string]> = [];
  for (const text of texts) {
    const at = text.indexOf('=');
    if (at <= 0) return { problem: `\`${text}\` is not key=value` };
    const key = text.slice(0, at);
    const problem = labelKeyProblem(key, true) ?? labelValueProblem(text.slice(at + 1));
    if (problem) return { problem: `${key}: ${problem}` };
    pairs.push([key, text.slice(at + 1)]);
  }
  const selector = nullPrototypeMap(pairs);
  if (Object.keys(selector).length > MAX_LABELS) return { problem: `at most ${MAX_LABELS} pairs` };
  return { selector };
}

/** Whether a board with these labels is matched by the selector (its own labels only: never inherited names). */
export function matchesSelector(labels: Record<string, string>, selector: BoardSelector): boolean {
  for (const [key, value] of Object.entries(selector)) if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  return true;
}

/**
 * SQL: the labels hold every pair of the selector (`labels @> selector`, the GIN index's
 * operator). `labels`: a column or an SQL expression (`sql\`b.labels\``); `selector`: a
 * selector, or an SQL expression of one (`sql\`hc.board_selector\``). The one place this
 * match is written.
 */
export function selectorMatchesSql(labels: AnyPgColumn | SQL, selector: BoardSelector | SQL): SQL {
  return is(selector, SQL) ? sql`${labels} @> ${selector}` : sql`${labels} @> ${JSON.stringify(selector)}::jsonb`;
}

/** SQL: the selector (an SQL expression, e.g. an operation's `board_selector`) is held by these labels. */
export function selectorHeldBySql(selector: SQL, labels: Record<string, string>): SQL {
  return sql`${selector} <@ ${JSON.stringify(labels)}::jsonb`;
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
