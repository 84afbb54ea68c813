/** A cache failure with a stable code the operation reports (`checksum_mismatch`, `size_mismatch`, …). */
export class CacheError extends Error {
  override name = 'CacheError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
