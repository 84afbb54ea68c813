import { eq } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { invocationFiles, invocations } from '../db/schema.ts';
import { sniffFileContentType, videoTypeFromExtension } from '../http/content-type.ts';
import { localFileOpener, type ServedFile } from '../http/file-response.ts';
import type { StoreContext } from '../store-context.ts';
import { listResultsVideos, resolveResultsVideo, resultsVideoUrl } from '../storage/results-folder.ts';
import type { VideoRecord } from './invocation-records.ts';

/** The output videos of invocations, as the video list shows them. */
export async function invocationVideos(db: Db): Promise<VideoRecord[]> {
  const rows = await db
    .select({ file: invocationFiles, name: invocations.name })
    .from(invocationFiles)
    .innerJoin(invocations, eq(invocations.id, invocationFiles.invocationId))
    .where(eq(invocationFiles.kind, 'output_video'));
  return rows.map(({ file, name }) => ({
    source: 'invocation' as const,
    invocation_id: file.invocationId,
    name,
    filename: file.filename,
    size: file.size,
    content_type: file.contentType,
    modified_at: file.uploadedAt.toISOString(),
    url: `/api/invocations/${file.invocationId}/video/`,
  }));
}

/** The videos of the results folder (MM_RESULTS_DIR), as the video list shows them. */
async function resultsVideos(resultsDir: string): Promise<VideoRecord[]> {
  const found = await listResultsVideos(resultsDir);
  return found.map((v) => ({
    source: 'results' as const,
    invocation_id: null,
    name: v.relativePath,
    filename: v.relativePath.slice(v.relativePath.lastIndexOf('/') + 1),
    size: v.stats.size,
    content_type: videoTypeFromExtension(v.relativePath),
    modified_at: v.stats.mtime.toISOString(),
    url: resultsVideoUrl(v.relativePath),
  }));
}

/** Every video (invocations' outputs and the results folder's), newest first. */
export async function allVideos(ctx: StoreContext): Promise<VideoRecord[]> {
  const all = [...(await invocationVideos(ctx.database.db)), ...(await resultsVideos(ctx.config.resultsDir))];
  all.sort((a, b) => (a.modified_at < b.modified_at ? 1 : a.modified_at > b.modified_at ? -1 : a.url.localeCompare(b.url)));
  return all;
}

/**
 * A video of the results folder by its still-encoded path below `/api/videos/results/`, as
 * a download serves it; undefined when there is no such video inside the folder.
 */
export async function openResultsVideo(ctx: StoreContext, encodedPath: string): Promise<{ file: ServedFile; relativePath: string } | undefined> {
  const video = await resolveResultsVideo(ctx.config.resultsDir, encodedPath);
  if (!video) return undefined;
  const { stats, absolutePath, relativePath } = video;
  const filename = relativePath.slice(relativePath.lastIndexOf('/') + 1);
  const file: ServedFile = {
    size: stats.size,
    etag: `"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`,
    lastModified: stats.mtime,
    contentType: await sniffFileContentType(absolutePath, filename).catch(() => videoTypeFromExtension(filename)),
    disposition: { type: 'inline', filename },
    open: localFileOpener(absolutePath),
  };
  return { file, relativePath };
}
