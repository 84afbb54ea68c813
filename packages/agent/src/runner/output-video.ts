import fsp from 'node:fs/promises';
import path from 'node:path';

const VIDEO_TYPES: Record<string, string> = { '.mp4': 'video/mp4', '.avi': 'video/x-msvideo' };

export function videoContentType(filename: string): string | undefined {
  return VIDEO_TYPES[path.extname(filename).toLowerCase()];
}

/** The newest `.mp4`/`.avi` regular file directly in `dir` (by modification time), if any. */
export async function findOutputVideo(dir: string): Promise<string | undefined> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  let best: { file: string; mtimeMs: number } | undefined;
  for (const name of names) {
    if (!videoContentType(name)) continue;
    const file = path.join(dir, name);
    const st = await fsp.stat(file).catch(() => undefined);
    if (!st?.isFile()) continue;
    if (!best || st.mtimeMs > best.mtimeMs || (st.mtimeMs === best.mtimeMs && file > best.file)) best = { file, mtimeMs: st.mtimeMs };
  }
  return best?.file;
}
