import { ApiError, BadRequestError } from '../errors.ts';

/** The tus protocol version this server speaks, and the extensions it offers. */
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,termination,expiration';
export const TUS_CONTENT_TYPE = 'application/offset+octet-stream';

/** Headers every tus answer carries; browsers may read them. */
export const TUS_EXPOSED_HEADERS = 'Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Location';

export class TusVersionError extends ApiError {
  constructor(got: string | undefined) {
    super(
      412,
      'tus_version_unsupported',
      'Precondition Failed',
      got === undefined ? `Send Tus-Resumable: ${TUS_VERSION} (the tus protocol version).` : `Tus-Resumable ${JSON.stringify(got)} is not supported; this server speaks ${TUS_VERSION}.`,
    );
    this.headers['tus-version'] = TUS_VERSION;
  }
}

/** Rejects a request that does not speak tus 1.0.0 (every tus request but OPTIONS). */
export function requireTusVersion(header: string | undefined): void {
  if (header?.trim() !== TUS_VERSION) throw new TusVersionError(header);
}

/** A non-negative whole number header (`Upload-Length`, `Upload-Offset`). */
export function parseByteCount(name: string, value: string | undefined): number {
  if (value === undefined) throw new BadRequestError('validation_failed', `The ${name} header is required.`, [{ field: name, message: 'required' }]);
  if (!/^\d{1,16}$/.test(value.trim()) || !Number.isSafeInteger(Number(value.trim()))) {
    throw new BadRequestError('validation_failed', `${name} must be a whole number of bytes.`, [{ field: name, message: 'must be a whole number of bytes' }]);
  }
  return Number(value.trim());
}

/**
 * `Upload-Metadata`: comma-separated `key base64(value)` pairs (a key alone means an
 * empty value). Keys must be unique.
 */
export function parseUploadMetadata(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header?.trim()) return out;
  for (const pair of header.split(',')) {
    const parts = pair.trim().split(' ');
    const key = parts[0] ?? '';
    const encoded = parts[1] ?? '';
    if (!/^[^\s,]+$/.test(key) || parts.length > 2 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || out.has(key)) {
      throw new BadRequestError('validation_failed', 'Upload-Metadata must be comma-separated "key base64value" pairs with unique keys.', [
        { field: 'Upload-Metadata', message: `bad pair ${JSON.stringify(pair.trim().slice(0, 80))}` },
      ]);
    }
    out.set(key, Buffer.from(encoded, 'base64').toString('utf8'));
  }
  return out;
}

export function encodeUploadMetadata(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k} ${Buffer.from(v, 'utf8').toString('base64')}`)
    .join(',');
}
