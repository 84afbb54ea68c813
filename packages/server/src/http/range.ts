/**
 * `Range: bytes=…` requests (RFC 9110 §14.1–14.2), answered with one range at most.
 *
 * - no header, or a unit other than `bytes` → the whole content (a server MUST ignore
 *   units it does not understand);
 * - `bytes=` with any invalid range-spec (bad syntax, last < first) or with no satisfiable
 *   range → 416 (the RFC's SHOULD for "invalid or unsatisfiable");
 * - several ranges → the first satisfiable one as a single-part 206 (a server need not
 *   send multipart/byteranges; the Content-Range tells the client what it got).
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

  let first: { start: number; end: number } | undefined;
  for (const spec of specs) {
    const r = satisfiable(spec, size);
    if (r === 'invalid') return { kind: 'unsatisfiable' };
    if (r && !first) first = r;
  }
  return first ? { kind: 'partial', ...first } : { kind: 'unsatisfiable' };
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
