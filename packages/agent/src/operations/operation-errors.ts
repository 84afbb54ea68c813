import type { ErrorInfo } from '@mm/protocol';

/** Ends an operation with this error code and message. */
export class OperationError extends Error {
  override name = 'OperationError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  get info(): ErrorInfo {
    return { code: this.code, message: this.message };
  }
}

/** The operation was stopped (op.cancel, or the agent shutting down). */
export class OperationStopped extends Error {
  override name = 'OperationStopped';
}
