import fsp from 'node:fs/promises';
import path from 'node:path';

/** Memory in use: MemTotal − MemAvailable of `<root>/proc/meminfo`, in bytes (undefined if unreadable). */
export async function readMemoryUsed(root: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(path.join(root, 'proc/meminfo'), 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const total = kib('MemTotal');
  // MemAvailable since Linux 3.14; before it, free + buffers + cache is the usual estimate.
  const available = kib('MemAvailable') ?? sum(kib('MemFree'), kib('Buffers'), kib('Cached'));
  if (total === undefined || available === undefined) return undefined;
  return Math.max(0, total - available) * 1024;
}

function sum(...values: Array<number | undefined>): number | undefined {
  return values.every((v) => v !== undefined) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : undefined;
}

/** The one-minute load average of `<root>/proc/loadavg`. */
export async function readLoad1m(root: string): Promise<number | undefined> {
  try {
    const first = (await fsp.readFile(path.join(root, 'proc/loadavg'), 'utf8')).split(' ')[0];
    const load = Number(first);
    return Number.isFinite(load) && load >= 0 ? load : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes an unprivileged user may still write on the file system holding `dir` (statfs). */
export async function readDiskFree(dir: string): Promise<number | undefined> {
  try {
    const s = await fsp.statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}
