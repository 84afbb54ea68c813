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
