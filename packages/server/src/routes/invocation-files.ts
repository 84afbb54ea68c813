import { createRoute, type Hook, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { NotFoundError, notFound, ValidationError } from '../errors.ts';
import { contentDisposition, serveFile } from '../http/file-response.ts';
import { receiveFileUpload } from '../services/file-upload.ts';
import { validationHook } from '../http/validation.ts';
import {
  attachInvocationFile,
  contentSource,
  detachInvocationFile,
  type InvocationFileRow,
  invocationFileOf,
} from '../invocations/invocation-files.ts';
import { FILE_KINDS, FileKindSchema, FileRecordSchema, INPUT_FILE_KINDS, InputFileKindSchema } from '../invocations/invocation-records.ts';
import { invocationZip } from '../invocations/invocation-zip.ts';
import { findInvocation, requireInvocation } from '../invocations/invocations.ts';
import { problemResponses, fileUploadResponses } from '../http/openapi.ts';
import { SerialId, SerialIdParams } from '../http/params.ts';

const FileParams = SerialIdParams.extend({
  kind: FileKindSchema.openapi({ param: { name: 'kind', in: 'path' } }),
});

const fileNotFound = (id: number, kind: string) =>
  new NotFoundError('file_not_found', `Invocation ${id} has no ${kind} file.`);

/**
 * Path parameters that do not parse name no resource: a bad id is the invocation's 404, a
 * bad kind the file's. Everything else goes to the common hook (400 with field problems).
 */
const hook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (result.success) return;
  if (result.target === 'param') {
    const { id = '', kind = '' } = c.req.param() as Record<string, string>;
    const parsedId = SerialId.safeParse(id);
    if (!parsedId.success) throw notFound.invocation(id);
    throw new NotFoundError('file_not_found', `There is no file kind ${JSON.stringify(kind)}; kinds: ${FILE_KINDS.join(', ')}.`);
  }
  return validationHook(notFound.invocation)(result, c);
};

const binary = { schema: { type: 'string' as const, format: 'binary' } };
const rangeResponses = {
  206: { description: 'The requested byte range (`Range` honoured; one range per response)' },
  302: { description: 'With `MM_BLOB_STORE=s3` and `MM_S3_REDIRECT_DOWNLOADS=1`: `Location` is a presigned URL on the object store (valid 1 h) that serves the bytes and honours `Range`' },
  304: { description: 'Not modified (`If-None-Match` / `If-Modified-Since`)' },
  416: { description: 'Range not satisfiable (problem+json, `Content-Range: bytes */size`)' },
};

const uploadRoute = createRoute({
  method: 'post',
  path: '/api/invocations/{id}/upload/',
  tags: ['invocations'],
  summary: 'Upload one of the four input files (streamed; replaces that kind)',
  request: {
    params: SerialIdParams,
    body: {
      required: true,
      // Described only: the route streams the multipart body itself (never into memory).
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file_type', 'file'],
            properties: {
              file_type: { type: 'string', enum: [...INPUT_FILE_KINDS] },
              file: { type: 'string', format: 'binary' },
            },
          },
        },
      },
    },
  },
  responses: {
    201: { description: 'The stored file', content: { 'application/json': { schema: FileRecordSchema } } },
    ...problemResponses,
    ...fileUploadResponses,
    400: { description: 'Bad input (`validation_failed`, …); `invalid_video`: an `input_video` whose bytes start with no video container (nothing stored); `invalid_parameter_file`' },
  },
});

const fileRoute = createRoute({
  method: 'get',
  path: '/api/invocations/{id}/files/{kind}/',
  tags: ['invocations'],
  summary: "Download one of the invocation's files",
  request: { params: FileParams },
  responses: {
    200: { description: 'The file', content: { 'application/octet-stream': binary } },
    ...rangeResponses,
    404: { description: 'No such invocation, or it has no file of that kind' },
  },
});

const deleteFileRoute = createRoute({
  method: 'delete',
  path: '/api/invocations/{id}/files/{kind}/',
  tags: ['invocations'],
  summary: "Remove one of the invocation's files",
  request: { params: FileParams },
  responses: {
    204: { description: 'Removed' },
    404: { description: 'No such invocation, or it has no file of that kind' },
  },
});

const videoRoute = createRoute({
  method: 'get',
  path: '/api/invocations/{id}/video/',
  tags: ['invocations', 'videos'],
  summary: "The invocation's output video",
  request: { params: SerialIdParams },
  responses: {
    200: { description: 'The output video', content: { 'video/mp4': binary, 'video/x-msvideo': binary } },
    ...rangeResponses,
    404: { description: 'No such invocation, or it has no output video yet (`video_not_found`)' },
  },
});

const downloadRoute = createRoute({
  method: 'get',
  path: '/api/invocations/{id}/download/',
  tags: ['invocations'],
  summary: 'The invocation as a ZIP: `<kind>/<filename>` entries and `invocation.json`',
  request: { params: SerialIdParams },
  responses: {
    200: { description: 'A streamed ZIP (attachment)', content: { 'application/zip': binary } },
    404: problemResponses[404],
  },
});

function parseFileType(value: string | undefined): (typeof INPUT_FILE_KINDS)[number] {
  const parsed = InputFileKindSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ValidationError([
    {
      field: 'file_type',
      message: value === undefined ? 'required: one of ' + INPUT_FILE_KINDS.join(', ') : `must be one of ${INPUT_FILE_KINDS.join(', ')}`,
    },
  ]);
}

function serveInvocationFile(c: Context, ctx: Services, row: InvocationFileRow) {
  return serveFile(c, {
    size: row.size,
    etag: `"${row.sha256}"`,
    lastModified: row.uploadedAt,
    contentType: row.contentType,
    disposition: { type: row.contentType.startsWith('video/') ? 'inline' : 'attachment', filename: row.filename },
    ...contentSource(ctx, row.sha256),
  });
}

/** A file name for the ZIP: the invocation's name made safe, and its id. */
function zipFilename(id: number, name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[^\w.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 80);
  return `${slug || 'invocation'}-${id}.zip`;
}

export function invocationFileRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: hook });

  app.openapi(uploadRoute, async (c) => {
    const { id } = c.req.valid('param');
    await requireInvocation(ctx, id);
    const { kind, file } = await receiveFileUpload(ctx, c.env.incoming, {
      checkField: (name, value) => {
        if (name === 'file_type') parseFileType(value);
      },
      accept: (fields, file) => {
        const kind = parseFileType(fields.get('file_type'));
        if (!file) throw new ValidationError([{ field: 'file', message: 'required: a file part named "file"' }]);
        return { kind, file };
      },
    });
    const record = await attachInvocationFile(ctx, id, kind, { filename: file.filename, sha256: file.sha256, size: file.size });
    return c.json(record, 201);
  });

  app.openapi(fileRoute, async (c) => {
    const { id, kind } = c.req.valid('param');
    const row = await invocationFileOf(ctx, id, kind);
    if (!row) {
      await requireInvocation(ctx, id);
      throw fileNotFound(id, kind);
    }
    return serveInvocationFile(c, ctx, row).catch((err: unknown) => {
      throw (err as NodeJS.ErrnoException).code === 'ENOENT' ? fileNotFound(id, kind) : err;
    });
  });

  app.openapi(deleteFileRoute, async (c) => {
    const { id, kind } = c.req.valid('param');
    await requireInvocation(ctx, id);
    if (!(await detachInvocationFile(ctx, id, kind))) throw fileNotFound(id, kind);
    return c.body(null, 204);
  });

  app.openapi(videoRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await invocationFileOf(ctx, id, 'output_video');
    const noVideo = () => new NotFoundError('video_not_found', `Invocation ${id} has no output video.`);
    if (!row) {
      await requireInvocation(ctx, id);
      throw noVideo();
    }
    return serveInvocationFile(c, ctx, row).catch((err: unknown) => {
      throw (err as NodeJS.ErrnoException).code === 'ENOENT' ? noVideo() : err;
    });
  });

  app.openapi(downloadRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await findInvocation(ctx, id);
    if (!found) throw notFound.invocation(id);
    const headers = {
      'content-type': 'application/zip',
      'content-disposition': contentDisposition('attachment', zipFilename(id, found.row.name)),
      'cache-control': 'no-store',
    };
    // HEAD: headers only; opening the files for a body nobody reads would leak them.
    if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers });
    const body = await invocationZip(ctx, found.row, found.files, c.req.raw.signal);
    return new Response(body, { status: 200, headers });
  });

  return app;
}
