import fsp from 'node:fs/promises';
import path from 'node:path';

const VIDEO_TYPES: Record<string, string> = { '.mp4': 'video/mp4', '.avi': 'video/x-msvideo' };

export function videoContentType(filename: string): string | undefined {
  return VIDEO_TYPES[path.extname(filename).toLowerCase()];
}

/**
 * The newest `.mp4`/`.avi` regular file directly in `dir` (by modification time), if any.
 * `lstat`, not `stat`: a symbolic link (say, to a file of the agent's) is not an output
 * video. Whoever takes the file must still open it without following links, as the
 * runner may swap it after this look (ContentCache.importFile does).
 */
export async function findOutputVideo(dir: string): Promise<string | undefined> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  let best: { file: string; mtimeMs: number } | undefined;
  for (const name of names) {
    if (!videoContentType(name)) continue;
    const file = path.join(dir, name);
    const st = await fsp.lstat(file).catch(() => undefined);
    if (!st?.isFile()) continue;
    if (!best || st.mtimeMs > best.mtimeMs || (st.mtimeMs === best.mtimeMs && file > best.file)) best = { file, mtimeMs: st.mtimeMs };
  }
  return best?.file;
}
