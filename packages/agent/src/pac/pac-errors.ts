/**
 * Typed errors of the PAC pieces. Each carries a stable snake_case `code` (the `code` of the
 * protocol's ErrorInfo and of the API's problem details) and a message meant for the user.
 */
import { ArchiveError } from '../archive/archive-error.ts';

/** What went wrong with a PAC archive; the code the API answers is always invalid_pac_archive. */
export type PacArchiveProblem =
  | 'not_an_archive'
  | 'empty'
  | 'truncated'
  | 'unsafe_path'
  | 'link'
  | 'special_file'
  | 'layout'
  | 'no_manifest'
  | 'too_large';

/** The archive is refused; nothing of it was left on disk. */
export class PacArchiveError extends ArchiveError<'invalid_pac_archive', PacArchiveProblem> {
  readonly code = 'invalid_pac_archive';
  override readonly name = 'PacArchiveError';
}

export type XlnxConfigErrorCode =
  /** The command exited non-zero or was killed by a signal. */
  | 'xlnx_config_failed'
  /** The command did not end within its timeout and was killed. */
  | 'xlnx_config_timeout'
  /** The command could not be started (not installed, not executable). */
  | 'xlnx_config_unavailable'
  /** `xlnx-config -q` answered something the parser does not recognise. */
  | 'xlnx_config_output_unrecognised'
  /** The reboot command could not be started, failed or timed out. */
  | 'reboot_failed'
  /** A name xlnx-config would misread (empty, starting with '-', holding a line break). */
  | 'invalid_pac_name';

/** A board command failed; `output` is what it printed (stdout and stderr, interleaved). */
export class XlnxConfigError extends Error {
  override readonly name = 'XlnxConfigError';
  constructor(
    readonly code: XlnxConfigErrorCode,
    message: string,
    readonly output: string = '',
  ) {
    super(message);
  }
}
