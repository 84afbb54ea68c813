import path from 'node:path';

/** The most a stored file name may take: what filesystems (and the agent's) accept, in UTF-8 bytes. */
export const FILE_NAME_MAX_BYTES = 255;

/**
 * The one rule for a file name that enters from outside (a multipart upload, a tus upload's
 * `Upload-Metadata`, attach-by-digest, a board's output): names are cleaned, not refused,
 * because clients legitimately send paths (`C:\\Users\\me\\w.bin` from some browsers, a
 * client's relative path) and the name is only a label: the last path segment, whichever
 * separator was used, without NUL and control characters, trimmed, cut to 255 bytes of
 * UTF-8 on a character boundary. `../../../etc/cron.d/evil` → `evil`, `/abs/../../x` → `x`.
 * What is nothing after that (`..`, `/`, empty) becomes `fallback`.
 */
export function plainFileName(name: string, fallback = 'upload'): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  const last = path.posix.basename(cleaned.replace(/\\/g, '/')).trim();
  if (last === '' || last === '.' || last === '..') return fallback;
  const chars = Array.from(last);
  let bytes = Buffer.byteLength(last);
  while (bytes > FILE_NAME_MAX_BYTES) bytes -= Buffer.byteLength(chars.pop()!);
  return chars.join('');
}
