import fs from 'node:fs';
import path from 'node:path';
import type { Api } from '../api.ts';
import { boardIdOf } from '../board-choice.ts';
import { UsageError } from '../errors.ts';

/**
 * The multipart body of an archive install (`mm apps install`, `mm pac install`): the archive
 * streams from disk as its `file` part (never read into memory), with `board_id` when a board
 * was named or is the only one. Its name and size, for the progress line.
 */
export async function archiveForm(api: Api, archive: string, board: string | undefined): Promise<{ form: FormData; name: string; size: number }> {
  let size: number;
  try {
    size = (await fs.promises.stat(archive)).size;
  } catch {
    throw new UsageError(`Cannot read ${archive}.`);
  }
  const form = new FormData();
  const boardId = await boardIdOf(api, board);
  if (boardId) form.set('board_id', boardId);
  const name = path.basename(archive);
  form.set('file', await fs.openAsBlob(archive), name);
  return { form, name, size };
}
