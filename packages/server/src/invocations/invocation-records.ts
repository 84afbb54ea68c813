import { z } from '@hono/zod-openapi';
import type { invocationFiles, invocations } from '../db/schema.ts';
import { ModelSummarySchema } from '../accelerators/accelerator-schemas.ts';

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
    model: ModelSummarySchema.optional().openapi({ description: 'A `.xmodel` weights file: its DPU subgraphs and inputs, as the server read them (docs/accelerators.md)' }),
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
    requires_app: z.string().optional().openapi({ description: 'The accelerated application its runs need (PATCH sets it; absent when none): loaded first on a board where it is not active' }),
  })
  .openapi('Invocation');
export type InvocationRecord = z.infer<typeof InvocationSchema>;

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
    ...(row.model ? { model: row.model } : {}),
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
    // Only when set: an invocation without one keeps the shape it always had.
    ...(row.requiresApp ? { requires_app: row.requiresApp } : {}),
  };
}
