import type { AcceleratorFacts } from '@mm/protocol';

/**
 * A board's accelerator as the server keeps it: `facts.accelerator` (what the agent reported,
 * stamped with when it arrived) and the read-only labels it gives (docs/accelerators.md).
 * Imports nothing of the server: fleet/board-facts.ts derives the `mm/` labels with it.
 */

type Facts = Record<string, unknown>;

/** The stored form: the agent's AcceleratorFacts plus when the server got them. */
export type StoredAccelerator = AcceleratorFacts & { reported_at: string };

const MAX_VALUE = 63;

/** A name as a label value: printable ASCII, no spaces, at most 63 characters (case kept). */
function nameValue(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const v = text.replace(/[^\x21-\x7e]+/g, '-').replace(/^-+|-+$/g, '').slice(0, MAX_VALUE);
  return v || undefined;
}

/** The accelerator's labels: `mm/dpu-arch`, `mm/dpu-fingerprint`, `mm/app` (the active app), `mm/vai-version`, where known. */
export function acceleratorLabels(facts: Facts): Record<string, string> {
  const accel = facts.accelerator as Partial<AcceleratorFacts> | undefined;
  if (!accel || typeof accel !== 'object') return {};
  const active = Array.isArray(accel.apps) ? accel.apps.find((a) => a && a.active) : undefined;
  const labels: Record<string, string | undefined> = {
    'mm/dpu-arch': nameValue(accel.dpu?.arch),
    'mm/dpu-fingerprint': nameValue(accel.dpu?.fingerprint),
    'mm/app': nameValue(active?.name),
    'mm/vai-version': nameValue(accel.vai_version),
  };
  return Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Facts with the agent's accelerator report in them (stamped now), or without one when it sent none. */
export function withAccelerator(facts: Facts, accelerator: AcceleratorFacts | undefined, at = new Date()): Facts {
  const { accelerator: _old, ...rest } = facts;
  return accelerator ? { ...rest, accelerator: { ...accelerator, reported_at: at.toISOString() } satisfies StoredAccelerator } : rest;
}

/** The stored accelerator of a board's facts, if any. */
export function storedAccelerator(facts: Facts | null | undefined): StoredAccelerator | undefined {
  const accel = facts?.accelerator;
  return accel && typeof accel === 'object' && Array.isArray((accel as AcceleratorFacts).apps) ? (accel as StoredAccelerator) : undefined;
}

