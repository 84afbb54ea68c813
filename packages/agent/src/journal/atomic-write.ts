import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Replaces `file` with `content` so that a crash at any moment leaves either the old or
 * the new content: write a temporary file next to it, fsync it, rename it over the
 * target, fsync the folder (so the rename itself is durable).
 */
export async function writeFileAtomic(file: string, content: string | Uint8Array): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fsp.open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  const dir = await fsp.open(path.dirname(file), 'r').catch(() => undefined);
  if (dir) {
    await dir.sync().catch(() => {});
    await dir.close();
  }
}
