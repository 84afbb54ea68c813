/** Board labels as people type and read them: `key=value` pairs (the server checks keys and values). */
export type Labels = Record<string, string>;

/** `site=lab-2` → `['site', 'lab-2']`; undefined when there is no key before an `=`. */
export function parseLabelPair(text: string): [string, string] | undefined {
  const at = text.indexOf('=');
  return at > 0 ? [text.slice(0, at).trim(), text.slice(at + 1).trim()] : undefined;
}

/** `{ rack: 'a', site: 'lab-2' }` → `rack=a, site=lab-2` (sorted by key; `separator` between pairs). */
export function formatLabels(labels: Labels, separator = ', '): string {
  return Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(separator);
}

/** Edit distance of two short strings (labels are at most 63 characters). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * A selector no board matches: the nearest `key=value` pair some board holds, for a "did you
 * mean site=lab-1?" (the pair of the selector that no board holds, compared with every pair
 * the boards hold; close enough: at most a third of its length apart). Undefined when nothing
 * is near, or when every pair is held (only their combination matches nothing).
 */
export function nearestLabel(selector: Labels, boards: Labels[]): string | undefined {
  const held = new Set(boards.flatMap((l) => Object.entries(l).map(([k, v]) => `${k}=${v}`)));
  let best: { text: string; d: number } | undefined;
  for (const [k, v] of Object.entries(selector)) {
    const wanted = `${k}=${v}`;
    if (held.has(wanted)) continue;
    for (const have of held) {
      const d = distance(wanted, have);
      if (d <= Math.max(2, Math.ceil(wanted.length / 3)) && (!best || d < best.d)) best = { text: have, d };
    }
  }
  return best?.text;
}
