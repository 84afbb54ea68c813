import type { IncomingMessage } from 'node:http';
import { z } from '@hono/zod-openapi';
import type { Services } from '../services.ts';
import { ValidationError } from '../errors.ts';
import { receiveFileUpload } from '../services/file-upload.ts';
import { boardForOperation } from '../operations/board-selection.ts';
import type { OperationObject } from '../operations/operation-object.ts';

/**
 * What the archive installs (`POST /api/apps/install/`, `POST /api/pacs/install/`) share: the
 * board field, the multipart body they describe, and the upload that becomes an operation the
 * board pulls the archive through. The routes differ in their kind, their answer and their
 * archive's rules (checked on the board).
 */

export const boardIdField = z.string().uuid().openapi({ description: 'The board; may be left out when exactly one is registered.' });

/** The install's body as the OpenAPI document describes it (the route streams the multipart body itself). */
export function archiveInstallBody(fileDescription: string) {
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object' as const,
          required: ['file'],
          properties: {
            file: { type: 'string' as const, format: 'binary', description: fileDescription },
            board_id: { type: 'string' as const, format: 'uuid' },
          },
        },
      },
    },
  };
}

/** `board_id` as a multipart field: absent or empty means "the single board". */
function boardIdFromField(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = boardIdField.safeParse(value);
  if (!parsed.success) throw new ValidationError([{ field: 'board_id', message: 'must be a board id (UUID)' }]);
  return parsed.data;
}

/**
 * Streams the upload to disk, then creates the `kind` operation that lets the board pull it
 * (`params`: the held upload's id, sha256, size and file name). The server keeps its copy
 * until the operation ends; an operation that could not be created lets it go at once.
 */
export async function startArchiveInstall(ctx: Services, incoming: IncomingMessage, kind: string, fileDescription: string): Promise<OperationObject> {
  const { boardId, file } = await receiveFileUpload(ctx, incoming, {
    checkField: (name, value) => {
      if (name === 'board_id') boardIdFromField(value);
    },
    accept: async (fields, file) => {
      if (!file) throw new ValidationError([{ field: 'file', message: `required: a file part named "file" (${fileDescription})` }]);
      return { boardId: await boardForOperation(ctx, boardIdFromField(fields.get('board_id'))), file };
    },
  });
  const uploadId = ctx.archives.hold(boardId, file.sha256);
  let op;
  try {
    op = await ctx.operations.create({ kind, boardId, params: { upload_id: uploadId, sha256: file.sha256, size: file.size, filename: file.filename } });
  } catch (err) {
    await ctx.archives.release(uploadId);
    throw err;
  }
  ctx.archives.releaseWhenEnded(op.id, uploadId);
  return op;
}
