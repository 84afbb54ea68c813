import { eq } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { invocationFiles, invocations } from '../db/schema.ts';
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
