import { z } from '@hono/zod-openapi';
import type { invocationFiles, invocations } from '../db/schema.ts';
import { OperationSchema } from '../operations/operation-object.ts';

/**
 * The JSON shapes of invocations, their files and videos (docs/api.md), as zod schemas (they
 * also describe the OpenAPI document) and the mapping from database rows to them.
 */

export const FILE_KINDS = ['parameter', 'bitstream', 'weights', 'input_video', 'output_video'] as const;
export type FileKind = (typeof FILE_KINDS)[number];
export const INPUT_FILE_KINDS = ['parameter', 'bitstream', 'weights', 'input_video'] as const;
export type InputFileKind = (typeof INPUT_FILE_KINDS)[number];

export const FileKindSchema = z.enum(FILE_KINDS);
export const InputFileKindSchema = z.enum(INPUT_FILE_KINDS);

const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

export const FileRecordSchema = z
  .object({
    kind: FileKindSchema,
    filename: z.string(),
    size: z.number().int().nonnegative(),
    sha256: z.string().openapi({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }),
    content_type: z.string().openapi({ example: 'video/mp4' }),
    uploaded_at: isoTime,
    url: z.string().openapi({ example: '/api/invocations/1/files/input_video/' }),
  })
  .openapi('FileRecord');
export type FileRecord = z.infer<typeof FileRecordSchema>;

export const InvocationFilesSchema = z
  .object({
    parameter: FileRecordSchema.nullable(),
    bitstream: FileRecordSchema.nullable(),
    weights: FileRecordSchema.nullable(),
    input_video: FileRecordSchema.nullable(),
    output_video: FileRecordSchema.nullable(),
  })
  .openapi('InvocationFiles');

export const InvocationSchema = z
  .object({
    id: z.number().int().positive(),
    name: z.string(),
    description: z.string(),
    created_at: isoTime,
    updated_at: isoTime,
    files: InvocationFilesSchema,
  })
  .openapi('Invocation');
export type InvocationRecord = z.infer<typeof InvocationSchema>;

export const InvocationDetailsSchema = InvocationSchema.extend({
  operations: z.array(OperationSchema).openapi({ description: 'Its latest operations, newest first.' }),
}).openapi('InvocationDetails');

/** A list item: the invocation and its latest run (its latest `execute`, null before the first). */
export const InvocationListItemSchema = InvocationSchema.extend({
  // A union, not `.nullable()`: that would turn the shared Operation component itself nullable.
  latest_run: z.union([OperationSchema, z.null()]),
}).openapi('InvocationListItem');

export const VideoSchema = z
  .object({
    source: z.enum(['invocation', 'results']),
    invocation_id: z.number().int().nullable(),
    name: z.string().openapi({ description: "The invocation's name, or the path inside the results folder." }),
    filename: z.string(),
    size: z.number().int().nonnegative(),
    content_type: z.string(),
    modified_at: isoTime,
    url: z.string(),
  })
  .openapi('Video');
export type VideoRecord = z.infer<typeof VideoSchema>;

type InvocationRow = typeof invocations.$inferSelect;
type InvocationFileRow = typeof invocationFiles.$inferSelect;

export function fileUrl(invocationId: number, kind: FileKind): string {
  return `/api/invocations/${invocationId}/files/${kind}/`;
}

export function toFileRecord(row: InvocationFileRow): FileRecord {
  const kind = FileKindSchema.parse(row.kind);
  return {
    kind,
    filename: row.filename,
    size: row.size,
    sha256: row.sha256,
    content_type: row.contentType,
    uploaded_at: row.uploadedAt.toISOString(),
    url: fileUrl(row.invocationId, kind),
  };
}

export function toInvocationRecord(row: InvocationRow, files: InvocationFileRow[]): InvocationRecord {
  const byKind: InvocationRecord['files'] = {
    parameter: null,
    bitstream: null,
    weights: null,
    input_video: null,
    output_video: null,
  };
  for (const f of files) {
    const parsed = FileKindSchema.safeParse(f.kind);
    if (parsed.success) byKind[parsed.data] = toFileRecord(f);
  }
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    files: byKind,
  };
}
