import type { MiddlewareHandler } from 'hono';
import { UnsupportedMediaTypeError } from '../errors.ts';

/** The OpenAPI pieces several route modules share (their path and paging parameters: params.ts). */

export const problemResponses = {
  400: { description: 'Bad input (problem+json, `validation_failed`, `malformed_json`, …)' },
  404: { description: 'No such invocation (problem+json, `invocation_not_found`)' },
} as const;

/** JSON bodies must say so: anything else is 415, before the body is parsed. */
export const requireJson: MiddlewareHandler = async (c, next) => {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new UnsupportedMediaTypeError(`Send the body as application/json (got ${type ? JSON.stringify(type) : 'no Content-Type'}).`);
  }
  await next();
};

/** The OpenAPI answers of a route that receives its upload with `receiveFileUpload`. */
export const fileUploadResponses = {
  413: { description: 'The file is larger than MM_MAX_UPLOAD_BYTES; nothing is kept' },
  415: { description: 'The body is not multipart/form-data' },
} as const;
