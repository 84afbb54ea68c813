import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ZodError } from 'zod';
import { isDatabaseUnavailable } from '../db/pg-error.ts';
import { ApiError, type FieldProblem } from '../errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldProblem[];
  [extra: string]: unknown;
}

/**
 * One problem per zod issue, named by its path (`(body)` for the body as a whole); an
 * unrecognized-key issue names each unknown key as its own field.
 */
export function zodFieldProblems(error: ZodError): FieldProblem[] {
  const fieldOf = (path: readonly PropertyKey[]) => (path.length ? path.join('.') : '(body)');
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((key) => ({ field: fieldOf([...i.path, key]), message: 'unknown field' }))
      : [{ field: fieldOf(i.path), message: i.message }],
  );
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const codesForHttpException: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Maps anything thrown by a route to a problem body. Unknown errors become an opaque 500. */
export function toProblem(err: unknown): ProblemBody {
  if (err instanceof ApiError) {
    return {
      type: 'about:blank',
      title: err.title,
      status: err.status,
      detail: err.message,
      code: err.code,
      ...(err.errors ? { errors: err.errors } : {}),
      ...err.extra,
    };
  }
  if (err instanceof ZodError) {
    return { type: 'about:blank', title: 'Validation Failed', status: 400, detail: 'The request is not valid.', code: 'validation_failed', errors: zodFieldProblems(err) };
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const detail = status === 400 && /json/i.test(err.message) ? 'The request body is not valid JSON.' : err.message || titles[status] || 'Error';
    return {
      type: 'about:blank',
      title: titles[status] ?? 'Error',
      status,
      detail,
      code: status === 400 && /json/i.test(err.message) ? 'malformed_json' : (codesForHttpException[status] ?? `http_${status}`),
    };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The database is unreachable; try again shortly.',
      code: 'database_unreachable',
    };
  }
  return { type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'An unexpected error occurred.', code: 'internal_error' };
}

export function problemResponse(c: Context, problem: ProblemBody, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...headers },
  });
}
