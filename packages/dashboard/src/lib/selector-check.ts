// From the shared package (not ../api/client.ts): pure, so Node-side unit tests can import this file.
import { nearestLabel, type Board } from '@mm/api-client';

export interface SelectorCheck {
  /** Registered boards whose labels hold every pair. */
  matching: Board[];
  /** Pairs of the selector no board holds, each with the nearest pair some board does ("did you mean"). */
  unheld: Array<{ wanted: string; key: string; nearest?: string }>;
}

/**
 * A selector checked against the boards before anything is created, uploaded or sent: which
 * boards match and, when none does, which pair no board holds and the nearest one that some
 * board holds (`sit=lab-1` → `site=lab-1`), as `mm run --label` does.
 */
export function checkSelector(selector: Record<string, string>, boards: readonly Board[]): SelectorCheck {
  const labels = boards.map((b) => b.labels ?? {});
  const matching = boards.filter((b) => Object.entries(selector).every(([k, v]) => b.labels?.[k] === v));
  const held = new Set(labels.flatMap((l) => Object.entries(l).map(([k, v]) => `${k}=${v}`)));
  const unheld = Object.entries(selector)
    .filter(([k, v]) => !held.has(`${k}=${v}`))
    .map(([k, v]) => ({ wanted: `${k}=${v}`, key: k, nearest: nearestLabel({ [k]: v }, labels) }));
  return { matching, unheld };
}

/** The selector without `key`, with `pair` (`k=v`) in its place. */
export function replacePair(selector: Record<string, string>, key: string, pair: string): Record<string, string> {
  const at = pair.indexOf('=');
  const out = Object.fromEntries(Object.entries(selector).filter(([k]) => k !== key));
  out[pair.slice(0, at)] = pair.slice(at + 1);
  return out;
}
