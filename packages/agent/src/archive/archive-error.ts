/**
 * An archive refused by an installer (accelerator/app-errors.ts `AppArchiveError`,
 * pac/pac-errors.ts `PacArchiveError`): the API's `code` (always the same for a kind of
 * archive) and which rule it broke (`problem`, for logs and tests). Nothing of it was left on disk.
 */
export abstract class ArchiveError<Code extends string, Problem extends string> extends Error {
  abstract readonly code: Code;
  constructor(
    /** Which rule the archive broke (for logs and tests; the API answers `code`). */
    readonly problem: Problem,
    message: string,
  ) {
    super(message);
  }
}
