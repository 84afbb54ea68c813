/**
 * Generated bad requests for the API fuzz test: for every operation of the OpenAPI
 * document, odd path parameters, query strings, headers and bodies (wrong types, huge and
 * negative numbers, NUL and odd unicode, malformed JSON and multipart).
 */
import fc from 'fast-check';

export interface OpenApiOperation {
  method: string;
  /** The documented path, `{name}` parameters included. */
  template: string;
  pathParams: string[];
  queryParams: string[];
  /** Property names of the JSON body's schema (empty when none is documented). */
  bodyProperties: string[];
  bodyType: 'json' | 'multipart' | 'none';
  /** Documented response statuses. */
  statuses: Set<number>;
}

export interface FuzzRequest {
  method: string;
  /** The raw request target (already percent-encoded where it has to be). */
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  op: OpenApiOperation;
}

interface OpenApiDoc {
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, SchemaObject> };
}
interface OperationObject {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content?: Record<string, { schema?: SchemaObject }> };
  responses?: Record<string, unknown>;
}
interface SchemaObject {
  $ref?: string;
  properties?: Record<string, unknown>;
  allOf?: SchemaObject[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document, with what the generators need to know about it. */
export function operationsOf(doc: OpenApiDoc): OpenApiOperation[] {
  const resolve = (s: SchemaObject | undefined): SchemaObject | undefined => {
    if (!s?.$ref) return s;
    return doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')];
  };
  const propertiesOf = (s: SchemaObject | undefined): string[] => {
    const r = resolve(s);
    if (!r) return [];
    return [...Object.keys(r.properties ?? {}), ...(r.allOf ?? []).flatMap(propertiesOf)];
  };
  const ops: OpenApiOperation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const content = op.requestBody?.content ?? {};
      const json = content['application/json'];
      ops.push({
        method: method.toUpperCase(),
        template,
        pathParams: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        bodyProperties: propertiesOf(json?.schema),
        bodyType: json ? 'json' : content['multipart/form-data'] ? 'multipart' : 'none',
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
      });
    }
  }
  return ops;
}

// ── values ────────────────────────────────────────────────────────────────────────

const ODD_STRINGS = [
  '',
  ' ',
  '\0',
  'a\0b',
  '\u202e\u0301',
  '\uFEFF',
  '\uFFFF',
  '\u{1F4A9}',
  '\uD800', // a lone surrogate (JSON.stringify escapes it; UTF-8 encoding replaces it)
  'é',
  '../../etc/passwd',
  '%',
  '%00',
  'null',
  'true',
  '[]',
  '{}',
  '<script>',
  "' OR 1=1 --",
  '\r\n',
  'x'.repeat(5000),
];

const ODD_NUMBERS = [0, -1, 1, 1.5, -0.5, 2 ** 31 - 1, 2 ** 31, 3_000_000_000, 2 ** 53, -(2 ** 53), 1e308, -1e308, 5e-324];

const oddString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}\0${b}`) },
);

const oddNumber = fc.oneof(fc.constantFrom(...ODD_NUMBERS), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));

/** Any JSON value, leaning on the odd ones. */
const oddJsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    oddString,
    oddNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(oddString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A printable-ASCII header value (what an HTTP client can send at all). */
const headerText = fc
  .array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: 60 })
  .map((codes) => String.fromCharCode(...codes).trim());

// ── path, query, headers ──────────────────────────────────────────────────────────

const ODD_SEGMENTS = [
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '01',
  '2147483647',
  '2147483648',
  '3000000000',
  '99999999999999999999999',
  'abc',
  '%00',
  'a%00b',
  '%ZZ',
  '%',
  '%2F',
  '%2e%2e',
  '..',
  '.',
  '%20',
  '%F0%9F%92%A9',
  '%C0%AF',
  '%FF',
  'x'.repeat(3000),
  '00000000-0000-0000-0000-000000000000',
  'null',
  'undefined',
];

/** Percent-encodes every byte of the UTF-8 form but the unreserved ones (a lone surrogate becomes U+FFFD). */
const encodeSegment = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

/** One path segment: a real id of the fixtures, an odd literal, or an encoded odd string. */
function segment(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...known, '1') },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
    { weight: 1, arbitrary: oddString.map(encodeSegment) },
    { weight: 1, arbitrary: fc.integer().map(String) },
  );
}

/** A rest-of-path parameter (`{path}`): several segments, traversal attempts included. */
const restOfPath = fc.oneof(
  fc.constantFrom('../../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '%2e%2e/%2e%2e/x', 'a/b/c.mp4', 'x.mp4%00.txt', '', 'a//b', '%ZZ'),
  fc.array(oddString.map(encodeSegment), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/')),
);

const ODD_QUERY_VALUES = ['', '-1', '0', '3000000000', '2147483648', '1e3', '1.5', '0x10', 'abc', '%00', '%ZZ', '9'.repeat(400), 'true', '[]', '%E2%80%AE'];

const queryValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_QUERY_VALUES) },
  { weight: 2, arbitrary: oddString.map(encodeSegment) },
  { weight: 1, arbitrary: oddNumber.map((n) => encodeSegment(String(n))) },
);

function queryString(op: OpenApiOperation): fc.Arbitrary<string> {
  const names = [...op.queryParams, 'limit', 'offset', 'x'];
  return fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...names), oddString.map(encodeSegment)), queryValue), { maxLength: 4 })
    .chain((pairs) =>
      fc.constantFrom('?', '', '?&', '?=&').map((start) => (pairs.length === 0 ? start.replace('?', '') : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`)),
    );
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/problem+json',
  'application/json; charset=latin1',
  'application/jsonx',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=zzz',
  '*/*',
  'garbage',
];

const extraHeaders = fc.record(
  {
    prefer: fc.oneof(fc.constantFrom('respond-async', 'wait=1', 'respond-async, wait=0'), headerText),
    range: fc.oneof(fc.constantFrom('bytes=-1', 'bytes=5-1', 'bytes=99999999999999999999-', 'bytes=0-0,1-1,2-2', 'bytes=', 'items=0-1'), headerText),
    'if-none-match': headerText,
    'last-event-id': fc.oneof(fc.constantFrom('-1', '3000000000', '99999999999999999999', 'abc', ''), headerText),
    authorization: fc.oneof(fc.constantFrom('Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'Bearer x'.padEnd(5000, 'x')), headerText),
    'x-request-id': headerText,
    accept: fc.constantFrom('*/*', 'text/event-stream', 'application/xml', ''),
  },
  { requiredKeys: [] },
);

// ── bodies ────────────────────────────────────────────────────────────────────────

const MALFORMED_JSON = ['{', '{"name":', '[1,2', 'nul', '\0', '{"a":1}}', '\uFEFF{}', '{"name":"x",}', "{'name':'x'}", '1e999999', '"\\uD800"', '{"__proto__":{"x":1}}', ''];

function jsonBody(op: OpenApiOperation): fc.Arbitrary<Buffer> {
  const keys = [...op.bodyProperties, 'name', 'board_id', 'extra'];
  return fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...keys), oddJsonValue, { maxKeys: 5 }).map((o) => Buffer.from(JSON.stringify(o))) },
    { weight: 2, arbitrary: oddJsonValue.map((v) => Buffer.from(JSON.stringify(v) ?? 'undefined')) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((s) => Buffer.from(s)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 50 }).map((n) => Buffer.from(`${'['.repeat(n * 100)}${']'.repeat(n * 100)}`)) },
  );
}

/**
 * A multipart body that is wrong somehow: a part it should not have, an odd field value or
 * file name, a missing file, a body cut off before its closing boundary, a boundary that is
 * not the declared one. None is a complete valid upload (that would rightly store content).
 */
function multipartBody(): fc.Arbitrary<{ body: Buffer; contentType: string }> {
  const part = fc.record({
    name: fc.oneof(fc.constantFrom('file_type', 'file', 'board_id', 'archive', ''), oddString),
    filename: fc.option(fc.oneof(fc.constantFrom('a.tar', '../../x.tar', 'x\0.tar', '', 'é.mp4'), oddString)),
    value: fc.oneof(oddString, fc.constantFrom('parameter', 'bitstream', 'weights', 'input_video', 'output_video')),
  });
  return fc
    .record({
      parts: fc.array(part, { maxLength: 4 }),
      ending: fc.constantFrom('closed', 'cut', 'wrong-boundary', 'no-crlf'),
      declared: fc.constantFrom('b0undary', '', 'x'.repeat(100), '"quoted"'),
    })
    .filter(({ parts, ending }) => {
      // A well-formed body with a valid kind and a file would be a real upload.
      const kinds = ['parameter', 'bitstream', 'weights', 'input_video', 'output_video'];
      const real = parts.some((p) => p.name === 'file_type' && kinds.includes(p.value)) && parts.some((p) => p.name === 'file' && p.filename !== null);
      return !(real && ending === 'closed');
    })
    .map(({ parts, ending, declared }) => {
      const boundary = declared.replace(/"/g, '') || 'b0undary';
      const used = ending === 'wrong-boundary' ? 'other-boundary' : boundary;
      const chunks: string[] = [];
      for (const p of parts) {
        const disp = `form-data; name="${p.name}"${p.filename !== null ? `; filename="${p.filename}"` : ''}`;
        chunks.push(`--${used}\r\nContent-Disposition: ${disp}\r\n${p.filename !== null ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n${p.value}\r\n`);
      }
      if (ending === 'closed' || ending === 'wrong-boundary') chunks.push(`--${used}--\r\n`);
      if (ending === 'no-crlf') chunks.push(`--${used}--`);
      const text = chunks.join('');
      return { body: Buffer.from(ending === 'cut' ? text.slice(0, Math.max(0, text.length - 7)) : text), contentType: `multipart/form-data; boundary=${declared}` };
    });
}

// ── requests ──────────────────────────────────────────────────────────────────────

/** Known ids of the fixtures, by path parameter name. */
export type KnownIds = Record<string, string[]>;

export function fuzzRequest(ops: OpenApiOperation[], known: KnownIds): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...ops).chain((op) => {
    const params = op.pathParams.map((name) => (name === 'path' ? restOfPath : segment(known[name] ?? [])));
    const body: fc.Arbitrary<{ body: Buffer | undefined; contentType: string | undefined }> =
      op.bodyType === 'multipart'
        ? fc.oneof(
            { weight: 4, arbitrary: multipartBody() },
            { weight: 1, arbitrary: fc.record({ body: jsonBody(op), contentType: fc.constantFrom(...CONTENT_TYPES) }) },
          )
        : op.bodyType === 'json' || op.method !== 'GET'
          ? fc.record({
              body: fc.option(jsonBody(op), { freq: 6, nil: undefined }),
              contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 6, nil: undefined }),
            })
          : fc.constant({ body: undefined, contentType: undefined });
    return fc.record({ values: fc.tuple(...params), query: queryString(op), headers: extraHeaders, body, slash: fc.boolean() }).map(({ values, query, headers, body: b, slash }) => {
      let i = 0;
      let p = op.template.replace(/\{[^}]+\}/g, () => values[i++] ?? '');
      // Without the trailing slash a route answers the same; try both.
      if (!slash && p.endsWith('/') && p !== '/api/') p = p.slice(0, -1);
      const all: Record<string, string> = { ...(headers as Record<string, string>) };
      if (b.contentType !== undefined) all['content-type'] = b.contentType;
      return { method: op.method, path: `${p}${query}`, headers: all, body: b.body, op };
    });
  });
}
