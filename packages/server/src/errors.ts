/**
 * Typed API errors. Route code throws these; the one `onError` in app.ts turns them
 * into RFC 9457 problem details. `code` is the stable, machine-readable part.
 */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail?: string,
    readonly errors?: FieldProblem[],
    /** Extra members of the problem body (e.g. the failed operation). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(detail ?? title);
  }

  /** Response headers that belong with this error (e.g. `Content-Range` on a 416). */
  headers: Record<string, string> = {};
}

export class BadRequestError extends ApiError {
  constructor(code: string, detail: string, errors?: FieldProblem[]) {
    super(400, code, 'Bad Request', detail, errors);
  }
}

export class ValidationError extends ApiError {
  constructor(errors: FieldProblem[], detail = 'The request is not valid.') {
    super(400, 'validation_failed', 'Validation Failed', detail, errors);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(detail = 'A valid bearer token is required.') {
    super(401, 'unauthorized', 'Unauthorized', detail);
  }
}

export class NotFoundError extends ApiError {
  constructor(code: string, detail: string) {
    super(404, code, 'Not Found', detail);
  }
}

export class ConflictError extends ApiError {
  constructor(code: string, detail: string, extra?: Record<string, unknown>) {
    super(409, code, 'Conflict', detail, undefined, extra);
  }
}

/** 409 `board_name_taken`: board names are unique (`mm boards show <name>` names one board). */
export const boardNameTaken = (name: string) =>
  new ConflictError('board_name_taken', `Another board is named ${JSON.stringify(name)}: board names are unique. Choose another name.`, { name });

export class PayloadTooLargeError extends ApiError {
  constructor(detail: string) {
    super(413, 'payload_too_large', 'Payload Too Large', detail);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor(detail: string) {
    super(415, 'unsupported_media_type', 'Unsupported Media Type', detail);
  }
}

export class RangeNotSatisfiableError extends ApiError {
  constructor(readonly size: number) {
    super(416, 'range_not_satisfiable', 'Range Not Satisfiable', `The requested range is outside the file's ${size} bytes.`);
    this.headers['content-range'] = `bytes */${size}`;
  }
}

/** A download's If-Match or If-Unmodified-Since does not hold (RFC 9110 §13.1.1, §13.1.4). */
export class PreconditionFailedError extends ApiError {
  constructor(detail: string) {
    super(412, 'precondition_failed', 'Precondition Failed', detail);
  }
}

export class BadGatewayError extends ApiError {
  constructor(code: string, detail: string, extra?: Record<string, unknown>) {
    super(502, code, 'Bad Gateway', detail, undefined, extra);
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(code: string, detail: string, extra?: Record<string, unknown>) {
    super(503, code, 'Service Unavailable', detail, undefined, extra);
  }
}

export class GatewayTimeoutError extends ApiError {
  constructor(code: string, detail: string, extra?: Record<string, unknown>) {
    super(504, code, 'Gateway Timeout', detail, undefined, extra);
  }
}

export const notFound = {
  invocation: (id: unknown) => new NotFoundError('invocation_not_found', `No invocation with id ${String(id)}.`),
  board: (id: unknown) => new NotFoundError('board_not_found', `No board with id ${String(id)}.`),
  operation: (id: unknown) => new NotFoundError('operation_not_found', `No operation with id ${String(id)}.`),
};

/** 503 `board_offline`: the board has no live link to the server (or lost it before answering). */
export function boardOffline(boardId?: string, detail = 'The board is not connected.'): ServiceUnavailableError {
  return new ServiceUnavailableError('board_offline', detail, boardId === undefined ? undefined : { board_id: boardId });
}
