import fsp from 'node:fs/promises';
import path from 'node:path';

/** Which cache entry each file of an invocation folder shows, as a link to it or a copy (`{ name: sha256 }`). */
export function viewSourcesFile(invocationsDir: string, invocationId: number | string): string {
  return path.join(invocationsDir, `.${invocationId}.sources.json`);
}

/** The `{ name: sha256 }` record of an invocation folder (empty when there is none). */
export async function readViewSources(invocationsDir: string, folder: string): Promise<Record<string, string>> {
  const text = await fsp.readFile(viewSourcesFile(invocationsDir, folder), 'utf8').catch(() => '{}');
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}
