import fsp from 'node:fs/promises';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { BadRequestError, NotFoundError, notFound, ValidationError } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { plainFileName } from '../http/file-name.ts';
import { attachInvocationFile } from '../invocations/invocation-files.ts';
import { auditAs } from '../auth/request-auth.ts';
import { type FileRecord, FileRecordSchema, INPUT_FILE_KINDS, InputFileKindSchema } from '../invocations/invocation-records.ts';
import { requireInvocation } from '../invocations/invocations.ts';
import { CONTENT_UPLOAD_KIND, type UploadRow } from '../uploads/resumable-uploads.ts';
import {
  parseByteCount,
  parseUploadMetadata,
  requireTusVersion,
  TUS_EXTENSIONS,
  TUS_EXPOSED_HEADERS,
  TUS_VERSION,
} from '../uploads/tus-protocol.ts';
import { problemResponses, requireJson } from '../http/openapi.ts';
import { IdParams, SerialId, SerialIdParams } from '../http/params.ts';

const SHA256_HEX = /^[0-9a-f]{64}$/;

const tusHeaders = (extra: Record<string, string> = {}) => ({
  'Tus-Resumable': TUS_VERSION,
  'Access-Control-Expose-Headers': TUS_EXPOSED_HEADERS,
  'Cache-Control': 'no-store',
  ...extra,
});

const uploadStateHeaders = (row: UploadRow) =>
  tusHeaders({
    'Upload-Offset': String(row.offset),
    'Upload-Length': String(row.length),
    'Upload-Expires': row.expiresAt.toUTCString(),
    ...(row.metadata ? { 'Upload-Metadata': row.metadata } : {}),
  });

/** The upload's state as JSON (GET); HEAD answers the same headers without it. */
const UploadStateSchema = z
  .object({
    id: z.string().uuid(),
    invocation_id: z.number().int().nullable().openapi({ description: 'null: content uploaded on its own (stored by sha256, attached to nothing)' }),
    file_type: z.union([InputFileKindSchema, z.literal(CONTENT_UPLOAD_KIND)]),
    filename: z.string(),
    sha256: z.string().nullable(),
    length: z.number().int(),
    offset: z.number().int(),
    expires_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Upload');

const toUploadState = (row: UploadRow) => ({
  id: row.id,
  invocation_id: row.invocationId,
  file_type: row.kind as (typeof INPUT_FILE_KINDS)[number] | typeof CONTENT_UPLOAD_KIND,
  filename: row.filename,
  sha256: row.sha256,
  length: row.length,
  offset: row.offset,
  expires_at: row.expiresAt.toISOString(),
});

const tusResumableHeader = z.object({
  'tus-resumable': z.string().openapi({ example: TUS_VERSION, description: 'The tus version: 1.0.0 (412 otherwise)' }),
});
const noUpload = { description: 'No such upload (failed, terminated or expired; a finished one answers until it expires): `upload_not_found`' };
const wrongVersion = { description: 'Tus-Resumable missing or not 1.0.0 (`tus_version_unsupported`)' };

const AttachBody = z
  .object({
    sha256: z.string().regex(SHA256_HEX, 'must be 64 lowercase hex digits'),
    // Not safeString: a NUL is cleaned away like any control character (http/file-name.ts), not refused.
    filename: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(4096, 'must be at most 4096 characters')
      .openapi({ description: 'Stored as a plain base name (folders, NUL and control characters removed, cut to 255 bytes), as every upload name is' }),
  })
  .strict()
  .openapi('AttachByDigest', { example: { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', filename: 'weights.bin' } });

const attachRoute = createRoute({
  method: 'put',
  path: '/api/invocations/{id}/files/{kind}/',
  tags: ['invocations', 'uploads'],
  summary: 'Attach content the server already holds, by its sha256 (nothing is sent)',
  middleware: [requireJson] as const,
  request: {
    params: SerialIdParams.extend({ kind: InputFileKindSchema.openapi({ param: { name: 'kind', in: 'path' } }) }),
    body: { required: true, content: { 'application/json': { schema: AttachBody } } },
  },
  responses: {
    200: { description: 'The attached file (replaces that kind)', content: { 'application/json': { schema: FileRecordSchema } } },
    400: problemResponses[400],
    404: { description: 'No such invocation, not an input kind, or `content_not_found`: the server does not hold that content (upload it)' },
    415: { description: 'The body is not application/json' },
  },
});

export function uploadRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: validationHook((raw) => {
      if (!SerialId.safeParse(raw).success) return notFound.invocation(raw);
      return new NotFoundError('file_not_found', `Files can be attached as ${INPUT_FILE_KINDS.join(', ')}.`);
    }),
  });
  const store = ctx.resumableUploads;

  app.openapi(attachRoute, async (c) => {
    const { id, kind } = c.req.valid('param');
    const { sha256 } = c.req.valid('json');
    const filename = plainFileName(c.req.valid('json').filename);
    await requireInvocation(ctx, id);
    // Pinned, the content cannot be collected before the attach records it (which releases the pin).
    if (!(await ctx.files.pin(sha256))) {
      throw new NotFoundError('content_not_found', `The server does not hold content with sha256 ${sha256}; upload the file instead.`);
    }
    const stored = await ctx.files.stat(sha256);
    if (!stored) {
      ctx.files.release(sha256);
      throw new NotFoundError('content_not_found', 'The server does not hold content with this sha256: upload the file instead.');
    }
    const { size } = stored;
    return c.json(await attachInvocationFile(ctx, id, kind, { filename, sha256, size }), 200);
  });

  // ── tus 1.0 (described by hand: the bodies are raw bytes and the fields are headers) ──

  app.openAPIRegistry.registerPath({
    method: 'options',
    path: '/api/uploads/',
    tags: ['uploads'],
    summary: 'tus: what this server supports',
    responses: { 204: { description: 'Tus-Version, Tus-Extension (creation, termination, expiration), Tus-Max-Size (MM_MAX_UPLOAD_BYTES)' } },
  });
  const discovery = (c: Context<AppEnv>) =>
    c.body(null, 204, tusHeaders({ 'Tus-Version': TUS_VERSION, 'Tus-Extension': TUS_EXTENSIONS, 'Tus-Max-Size': String(ctx.config.maxUploadBytes) }));
  app.options('/api/uploads/', discovery);
  app.openAPIRegistry.registerPath({
    method: 'options',
    path: '/api/uploads/{id}/',
    tags: ['uploads'],
    summary: 'tus: what this server supports, asked on an upload URL',
    request: { params: IdParams },
    responses: { 204: { description: 'The same answer as OPTIONS /api/uploads/' } },
  });
  app.options('/api/uploads/:id/', discovery);

  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/api/uploads/',
    tags: ['uploads'],
    summary: 'tus creation: start a resumable upload of one input file',
    description:
      '`Upload-Metadata` (base64 values): `invocation_id`, `file_type` (parameter, bitstream, weights, input_video), `filename`, ' +
      'and optionally `sha256` (checked when the last byte arrives: `checksum_mismatch`, nothing attached). ' +
      'Without `invocation_id` and `file_type` (only `filename` and `sha256`, then required) the content is stored by its sha256 and attached to nothing: ' +
      'a `pac_install` rollout names it as `params.archive_sha256`; content no rollout or invocation names is swept after an hour. ' +
      'An upload untouched for MM_UPLOAD_EXPIRY_S is removed with its bytes (`Upload-Expires`). A zero-length upload is attached at once.',
    request: {
      headers: tusResumableHeader.extend({
        'upload-length': z.string().openapi({ description: 'The file size in bytes' }),
        'upload-metadata': z.string().openapi({ description: 'invocation_id, file_type, filename, sha256? (tus encoding)' }),
      }),
    },
    responses: {
      201: { description: 'Created: `Location` is the upload URL (`/api/uploads/<id>/`)' },
      400: { description: 'Missing or bad Upload-Length / Upload-Metadata (`validation_failed`)' },
      404: problemResponses[404],
      412: wrongVersion,
      413: { description: 'Upload-Length over MM_MAX_UPLOAD_BYTES (`payload_too_large`)' },
    },
  });
  app.post('/api/uploads/', async (c) => {
    requireTusVersion(c.req.header('tus-resumable'));
    if (c.req.header('upload-defer-length') !== undefined) {
      throw new BadRequestError('validation_failed', 'Upload-Defer-Length is not supported: send Upload-Length.', [{ field: 'Upload-Defer-Length', message: 'not supported' }]);
    }
    const length = parseByteCount('Upload-Length', c.req.header('upload-length'));
    const metadataHeader = c.req.header('upload-metadata') ?? '';
    const input = parseCreationMetadata(parseUploadMetadata(metadataHeader));
    if (input.invocationId !== null) await requireInvocation(ctx, input.invocationId);
    const row = await store.create({ ...input, metadata: metadataHeader, length });
    const location = `/api/uploads/${row.id}/`;
    if (length === 0) auditUploadFinished(row, await store.finishEmpty(row));
    return c.body(null, 201, tusHeaders({ Location: location, 'Upload-Offset': '0', 'Upload-Expires': row.expiresAt.toUTCString() }));
  });

  const stateResponses = { 404: noUpload, 412: wrongVersion };
  app.openAPIRegistry.registerPath({
    method: 'head',
    path: '/api/uploads/{id}/',
    tags: ['uploads'],
    summary: 'tus: the upload\'s offset (where to continue)',
    request: { params: IdParams, headers: tusResumableHeader },
    responses: { 200: { description: 'Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires' }, ...stateResponses },
  });
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/uploads/{id}/',
    tags: ['uploads'],
    summary: "The upload's state as JSON (and the HEAD headers)",
    request: { params: IdParams },
    responses: { 200: { description: 'The upload', content: { 'application/json': { schema: UploadStateSchema } } }, 404: noUpload },
  });
  app.get('/api/uploads/:id/', async (c) => {
    // HEAD is the tus request and must say its version; GET (JSON for people) need not.
    if (c.req.method === 'HEAD') requireTusVersion(c.req.header('tus-resumable'));
    const row = await store.get(c.req.param('id'));
    return c.json(toUploadState(row), 200, uploadStateHeaders(row));
  });

  app.openAPIRegistry.registerPath({
    method: 'patch',
    path: '/api/uploads/{id}/',
    tags: ['uploads'],
    summary: 'tus: append bytes at Upload-Offset',
    description:
      'The body (`application/offset+octet-stream`) is written at `Upload-Offset`, which must be the upload\'s offset. ' +
      'Bytes that arrive before a connection breaks are kept. The request that carries the last byte attaches the file ' +
      '(as `POST …/upload/` does) and answers 204 with `Upload-Offset` = Upload-Length; ' +
      'a declared sha256 that does not match answers 400 `checksum_mismatch` and removes the upload.',
    request: {
      params: IdParams,
      headers: tusResumableHeader.extend({ 'upload-offset': z.string() }),
      body: { content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    },
    responses: {
      204: { description: 'Appended: `Upload-Offset` is the new offset' },
      400: {
        description:
          '`checksum_mismatch` (the upload is removed; nothing attached), `invalid_video` (an `input_video` that is no video container: removed, nothing attached), `upload_too_long` (the body runs past Upload-Length: none of it is kept, nothing attached) or a bad Upload-Offset',
      },
      409: { description: '`offset_mismatch`: Upload-Offset is not the upload\'s offset (HEAD, then continue)' },
      415: { description: 'Not application/offset+octet-stream' },
      ...stateResponses,
    },
  });
  const append = async (c: Context<AppEnv>) => {
    requireTusVersion(c.req.header('tus-resumable'));
    const offset = parseByteCount('Upload-Offset', c.req.header('upload-offset'));
    const length = c.req.header('content-length');
    const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
    const result = await store.append(c.req.param('id') ?? '', offset, c.req.header('content-type'), c.env.incoming, c.req.raw.signal, declared);
    const finished = result.file ?? result.stored;
    if (finished) auditUploadFinished(result.row, finished);
    return c.body(null, 204, tusHeaders({ 'Upload-Offset': String(result.offset), 'Upload-Expires': result.row.expiresAt.toUTCString() }));
  };
  app.patch('/api/uploads/:id/', append);

  app.openAPIRegistry.registerPath({
    method: 'delete',
    path: '/api/uploads/{id}/',
    tags: ['uploads'],
    summary: 'tus termination: give up the upload and its bytes',
    request: { params: IdParams, headers: tusResumableHeader },
    responses: { 204: { description: 'Terminated' }, ...stateResponses },
  });
  const terminate = async (c: Context<AppEnv>) => {
    requireTusVersion(c.req.header('tus-resumable'));
    await store.terminate(c.req.param('id') ?? '');
    return c.body(null, 204, tusHeaders());
  };
  app.delete('/api/uploads/:id/', terminate);

  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/api/uploads/{id}/',
    tags: ['uploads'],
    summary: 'tus: PATCH or DELETE for clients that can only send POST (X-HTTP-Method-Override)',
    request: {
      params: IdParams,
      headers: tusResumableHeader.extend({ 'x-http-method-override': z.enum(['PATCH', 'DELETE']) }),
      body: { content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    },
    responses: {
      204: { description: 'As PATCH or DELETE' },
      400: { description: 'No or another X-HTTP-Method-Override (`validation_failed`), or as PATCH' },
      ...stateResponses,
    },
  });
  app.post('/api/uploads/:id/', async (c) => {
    const override = c.req.header('x-http-method-override')?.trim().toUpperCase();
    if (override === 'PATCH') return append(c);
    if (override === 'DELETE') {
      // The role table audits by method: the DELETE row's action, for the same termination.
      auditAs('upload.terminate', c.req.path);
      return terminate(c);
    }
    throw new BadRequestError('validation_failed', 'POST on an upload needs X-HTTP-Method-Override: PATCH or DELETE.', [
      { field: 'X-HTTP-Method-Override', message: 'must be PATCH or DELETE' },
    ]);
  });

  return app;
}

/** One audit entry per resumable upload: when its last byte attaches (or stores) the file, not one per PATCH. */
function auditUploadFinished(row: UploadRow, file: FileRecord | { sha256: string; size: number }): void {
  const common = { filename: row.filename, sha256: file.sha256, size: file.size, upload_id: row.id };
  if (row.invocationId === null) {
    auditAs('upload.store', `content ${file.sha256}`, common);
    return;
  }
  auditAs('upload.attach', `invocation ${row.invocationId}`, { invocation_id: row.invocationId, kind: row.kind, ...common });
}

function parseCreationMetadata(meta: Map<string, string>) {
  const problems: Array<{ field: string; message: string }> = [];
  const rawName = meta.get('filename') ?? '';
  if (!rawName.trim()) problems.push({ field: 'filename', message: 'required' });
  // Cleaned as every file name is (http/file-name.ts): `../../x` is stored as `x`.
  const filename = plainFileName(rawName);
  const sha256 = meta.get('sha256');
  if (sha256 !== undefined && !SHA256_HEX.test(sha256)) problems.push({ field: 'sha256', message: 'must be 64 lowercase hex digits' });
  // Neither invocation_id nor file_type: content on its own, named later by its sha256.
  if (!meta.has('invocation_id') && !meta.has('file_type')) {
    if (sha256 === undefined) problems.push({ field: 'sha256', message: 'required for an upload without invocation_id' });
    if (problems.length) throw new ValidationError(problems, 'Upload-Metadata is not valid.');
    return { invocationId: null, kind: CONTENT_UPLOAD_KIND, filename, sha256 };
  }
  const rawId = meta.get('invocation_id');
  const id = SerialId.safeParse(rawId ?? '');
  if (!id.success) problems.push({ field: 'invocation_id', message: rawId === undefined ? 'required' : 'must be a positive integer' });
  const kind = InputFileKindSchema.safeParse(meta.get('file_type'));
  if (!kind.success) problems.push({ field: 'file_type', message: `required: one of ${INPUT_FILE_KINDS.join(', ')}` });
  if (problems.length || !id.success || !kind.success) throw new ValidationError(problems, 'Upload-Metadata is not valid.');
  return { invocationId: id.data, kind: kind.data, filename, sha256 };
}
