import type { ApiProblem } from '@mm/api-client';

/** The client's exit codes (the contract's "The command-line client"). */
export const EXIT = {
  ok: 0,
  /** The operation failed or was cancelled (and any other refused request). */
  failed: 1,
  usage: 2,
  /** Server unreachable, no board, or board offline. */
  unreachable: 3,
  /** Not authenticated, or the role is too low. */
  auth: 4,
  interrupted: 130,
  /** `mm run --baseline NAME --fail-on-regression`: the comparison's verdict is `regressed`. */
  regression: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error meant for a person: printed as `mm: <message>` (and a hint), never with a stack. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly hint?: string,
    /** Extra members of the `--json` error document (e.g. the failed operation). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(EXIT.usage, message, hint);
  }
}

/** Ctrl-C: the command stopped where it was; `message` says what was kept. */
export class InterruptedError extends CliError {
  constructor(message = 'Interrupted.', hint?: string, details?: Record<string, unknown>) {
    super(EXIT.interrupted, message, hint, details);
  }
}

const HINTS: Record<string, string> = {
  unauthorized: 'Log in with `mm login`, or pass --token / set MM_API_TOKEN.',
  invalid_credentials: 'Check the username and password.',
  forbidden: 'Your role does not allow this; ask an admin.',
  no_board: 'Register a board with `mm boards add <name>` and start its agent.',
  board_offline: "Start the board's agent (mm-agent) or check its network, then try again.",
  no_matching_board: 'See the boards and their labels with `mm boards ls`; label one with `mm boards label <board> k=v`.',
  board_required: 'Several boards are registered: name one with --board <id> (see `mm boards ls`).',
  content_not_found: 'Upload the file instead.',
  checksum_mismatch: 'The file changed while it was sent; run the command again.',
  too_many_attempts: 'Wait a moment and try again.',
};

/** The exit code a problem answer means. */
export function exitCodeOf(problem: ApiProblem): ExitCode {
  if (problem.status === 401 || problem.status === 403) return EXIT.auth;
  // No board: none registered, none online, or none matching the labels asked for.
  if (problem.status === 503 || problem.code === 'no_board' || problem.code === 'board_offline' || problem.code === 'no_matching_board') return EXIT.unreachable;
  return EXIT.failed;
}

/** A problem (RFC 9457) the server answered with, in the client's words and exit code. */
export class ApiProblemError extends CliError {
  constructor(readonly problem: ApiProblem) {
    const fields = problem.errors.length ? ` (${problem.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
    super(exitCodeOf(problem), `${problem.detail || problem.title}${fields}`, HINTS[problem.code], {
      problem: { status: problem.status, code: problem.code, title: problem.title, detail: problem.detail, errors: problem.errors },
    });
  }

  get code(): string {
    return this.problem.code;
  }

  get status(): number {
    return this.problem.status;
  }
}

const SERVER_HINT = 'Is it running? Check --server, MM_SERVER_URL or `mm login --server URL`.';

/** The server could not be reached (exit 3); commands that retry test for this class. */
export class UnreachableError extends CliError {
  constructor(server: string, why: string) {
    super(EXIT.unreachable, `Cannot reach the server at ${server} (${why}).`, SERVER_HINT);
  }
}

export function unreachable(server: string, err: unknown): UnreachableError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new UnreachableError(server, why);
}

/** Something answers at the URL, but not the control plane's API (a web page, another service). */
export class NotModelManagerError extends CliError {
  constructor(server: string, what: string) {
    super(EXIT.unreachable, `${server} does not look like a Model Manager server: ${what}, not the API's JSON.`, 'Check --server, MM_SERVER_URL or `mm login --server URL`: it names the control plane, e.g. http://host:8000.');
  }
}
