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

/** An RFC 9457 problem the server answered with. */
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  errors?: Array<{ field: string; message: string }>;
  [extra: string]: unknown;
}

const HINTS: Record<string, string> = {
  unauthorized: 'Log in with `mm login`, or pass --token / set MM_API_TOKEN.',
  invalid_credentials: 'Check the username and password.',
  forbidden: 'Your role does not allow this; ask an admin.',
  no_board: 'Register a board with `mm boards add <name>` and start its agent.',
  board_offline: "Start the board's agent (mm-agent) or check its network, then try again.",
  board_required: 'Several boards are registered: name one with --board <id> (see `mm boards ls`).',
  content_not_found: 'Upload the file instead.',
  checksum_mismatch: 'The file changed while it was sent; run the command again.',
  too_many_attempts: 'Wait a moment and try again.',
};

/** The exit code a problem answer means. */
export function exitCodeOf(problem: Problem): ExitCode {
  if (problem.status === 401 || problem.status === 403) return EXIT.auth;
  if (problem.status === 503 || problem.code === 'no_board' || problem.code === 'board_offline') return EXIT.unreachable;
  return EXIT.failed;
}

export class ApiProblemError extends CliError {
  constructor(readonly problem: Problem) {
    const fields = problem.errors?.length ? ` (${problem.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
    super(
      exitCodeOf(problem),
      `${problem.detail ?? problem.title ?? `HTTP ${problem.status}`}${fields}`,
      problem.code ? HINTS[problem.code] : undefined,
      { problem },
    );
  }

  get code(): string | undefined {
    return this.problem.code;
  }

  get status(): number {
    return this.problem.status;
  }
}

export function unreachable(server: string, err: unknown): CliError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new CliError(EXIT.unreachable, `Cannot reach the server at ${server} (${why}).`, 'Is it running? Check --server, MM_SERVER_URL or `mm login --server URL`.');
}
