/**
 * Typed errors of the accelerator pieces, each with the stable `code` the RPC answers and
 * the API shows (docs/accelerators.md) and a message for people, which carries the tools'
 * output where there is any.
 */
import { ArchiveError } from '../archive/archive-error.ts';

export type AppErrorCode =
  /** The listing does not show the app. */
  | 'app_not_found'
  /** Another app still holds the slot (its unload did not free it), or the tool said so. */
  | 'no_empty_slot'
  /** The load ran and the app is not active afterwards, or the DPU / vart.conf check failed. */
  | 'app_load_failed'
  /** The load was still running after MM_APP_LOAD_TIMEOUT_S and was killed. */
  | 'app_load_timeout'
  /** The unload ran and the app is still active. */
  | 'app_unload_failed'
  /** Neither dfx-mgr-client nor xmutil can be run on this board. */
  | 'app_tools_unavailable'
  /** The tool printed a listing this agent cannot read. */
  | 'app_listing_unrecognised'
  /** Not a name a tool would read as a name (empty, starting with '-', control characters). */
  | 'invalid_app_name';

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: AppErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What went wrong with an app archive; the code the API answers is always invalid_app_archive. */
export type AppArchiveProblem =
  | 'not_an_archive'
  | 'empty'
  | 'truncated'
  | 'unsafe_path'
  | 'link'
  | 'special_file'
  | 'layout'
  | 'missing_file'
  | 'bad_shell_json'
  | 'bad_accel_json'
  | 'too_large';

/** The archive is refused; nothing of it was left on disk. */
export class AppArchiveError extends ArchiveError<'invalid_app_archive', AppArchiveProblem> {
  readonly code = 'invalid_app_archive';
  override readonly name = 'AppArchiveError';
}
