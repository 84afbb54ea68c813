/**
 * `Range: bytes=…` requests (RFC 9110 §14.1–14.2), answered with one range at most.
 *
 * - no header, or a unit other than `bytes` → the whole content (a server MUST ignore
 *   units it does not understand);
 * - `bytes=` with any invalid range-spec (bad syntax, last < first) or with no satisfiable
 *   range → 416 (the RFC's SHOULD for "invalid or unsatisfiable");
 * - several ranges → their satisfiable spans are merged where they overlap or touch; one
 *   span left → a single-part 206 of it; several → the whole content with 200, which the
 *   RFC allows (a server MAY ignore Range), instead of multipart/byteranges (docs/conformance.md).
 *   Answering only the first range, as before, dropped the others silently.
 */
export type RangeDecision =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined) return { kind: 'full' };
  const eq = header.indexOf('=');
  if (eq < 0) return { kind: 'full' };
  const unit = header.slice(0, eq).trim().toLowerCase();
  if (unit !== 'bytes') return { kind: 'full' };

  // Lists allow empty elements and optional whitespace around commas (RFC 9110 §5.6.1).
  const specs = header
    .slice(eq + 1)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (specs.length === 0) return { kind: 'unsatisfiable' };

  const spans: Array<{ start: number; end: number }> = [];
  for (const spec of specs) {
    const r = satisfiable(spec, size);
    if (r === 'invalid') return { kind: 'unsatisfiable' };
    if (r) spans.push(r);
  }
  const merged = mergeSpans(spans);
  if (merged.length === 0) return { kind: 'unsatisfiable' };
  return merged.length === 1 ? { kind: 'partial', ...merged[0]! } : { kind: 'full' };
}

/** Spans sorted, with overlapping or adjacent ones joined. */
function mergeSpans(spans: Array<{ start: number; end: number }>): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last && s.start <= last.end + 1) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** The byte span a range-spec selects, undefined when unsatisfiable, 'invalid' when malformed. */
function satisfiable(spec: string, size: number): { start: number; end: number } | undefined | 'invalid' {
  const int = INT_RANGE.exec(spec);
  if (int) {
    const start = Number(int[1]);
    const last = int[2] === '' ? Number.POSITIVE_INFINITY : Number(int[2]);
    if (!Number.isSafeInteger(start) || last < start) return 'invalid';
    if (start >= size) return undefined;
    return { start, end: Math.min(last, size - 1) };
  }
  const suffix = SUFFIX_RANGE.exec(spec);
  if (suffix) {
    const length = Number(suffix[1]);
    if (length === 0 || size === 0) return undefined;
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  return 'invalid';
}
