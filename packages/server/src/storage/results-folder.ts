import type { Dirent, Stats } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/** Files of the results folder that count as videos (case-insensitive). */
const VIDEO_EXTENSION = /\.(mp4|avi)$/i;
/** Deeper folders are not listed (and symlinked folders are never followed: no loops). */
const MAX_DEPTH = 32;

export interface ResultsVideo {
  /** Path inside the results folder, `/`-separated. */
  relativePath: string;
  absolutePath: string;
  stats: Stats;
}

export function isVideoName(name: string): boolean {
  return VIDEO_EXTENSION.test(name);
}

/** True when `candidate` (a resolved real path) is `root` itself or lies inside it. */
function inside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

async function realRoot(root: string): Promise<string | undefined> {
  try {
    return await fsp.realpath(root);
  } catch {
    return undefined; // no results folder (any more): nothing to list or serve
  }
}

/**
 * Every `.mp4`/`.avi` under the results folder, subfolders included. A symlinked file is
 * listed only when it resolves to a file inside the folder; symlinked folders are skipped.
 */
export async function listResultsVideos(root: string): Promise<ResultsVideo[]> {
  const realRootPath = await realRoot(root);
  if (!realRootPath) return [];
  const found: ResultsVideo[] = [];

  const walk = async (dir: string, prefix: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch {
      return; // vanished or unreadable: skip it
    }
    for (const entry of entries) {
      const absolutePath = path.join(dir, entry.name);
      const relativePath = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) await walk(absolutePath, relativePath, depth + 1);
        continue;
      }
      if (!isVideoName(entry.name) || !(entry.isFile() || entry.isSymbolicLink())) continue;
      const resolved = await resolveInside(realRootPath, absolutePath);
      if (resolved) found.push({ relativePath, absolutePath: resolved.path, stats: resolved.stats });
    }
  };
  await walk(realRootPath, '', 0);
  return found;
}

/** The real path and stats of a regular file, when it resolves inside the root. */
async function resolveInside(realRootPath: string, file: string): Promise<{ path: string; stats: Stats } | undefined> {
  try {
    const real = await fsp.realpath(file);
    if (!inside(realRootPath, real)) return undefined;
    const stats = await fsp.stat(real);
    return stats.isFile() ? { path: real, stats } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Maps the still-encoded path after `/api/videos/results/` to a video file inside the
 * results folder, or undefined (→ 404) for anything else: `.`/`..` segments (also
 * percent-encoded), encoded slashes or backslashes, NUL, empty segments, absolute paths,
 * non-video names, and symlinks that resolve outside the folder.
 */
export async function resolveResultsVideo(root: string, encodedPath: string): Promise<ResultsVideo | undefined> {
  const segments: string[] = [];
  for (const raw of encodedPath.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) return undefined;
    segments.push(segment);
  }
  const name = segments.at(-1);
  if (!name || !isVideoName(name)) return undefined;

  const realRootPath = await realRoot(root);
  if (!realRootPath) return undefined;
  const resolved = await resolveInside(realRootPath, path.join(realRootPath, ...segments));
  return resolved && { relativePath: segments.join('/'), absolutePath: resolved.path, stats: resolved.stats };
}

export function resultsVideoUrl(relativePath: string): string {
  return `/api/videos/results/${relativePath.split('/').map(encodeURIComponent).join('/')}`;
}
