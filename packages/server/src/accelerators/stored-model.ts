import type { ModelSummary } from '../db/schema.ts';
import { BadRequestError } from '../errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { parseXmodel, XmodelError } from './xmodel-parser.ts';

/** Whether a file of this kind and name is read as an XIR model: a `weights` file named `*.xmodel`. */
export function isXmodel(kind: string, filename: string): boolean {
  return kind === 'weights' && /\.xmodel$/i.test(filename);
}

/**
 * Reads a stored `.xmodel` (streamed from the blob store, never held whole) and answers what
 * its file record keeps; one that does not parse is 400 `invalid_xmodel` (the caller stores
 * nothing). Files that are not xmodels answer undefined: they are left alone.
 */
export async function readStoredModel(files: BlobStore, kind: string, filename: string, sha256: string): Promise<ModelSummary | undefined> {
  if (!isXmodel(kind, filename)) return undefined;
  const stream = await files.open(sha256);
  try {
    return await parseXmodel(stream);
  } catch (err) {
    if (err instanceof XmodelError) {
      throw new BadRequestError('invalid_xmodel', `${filename} is not an XIR model the server can read: ${err.message.replace(/^not an XIR graph: /, '')}.`, [
        { field: 'file', message: 'an .xmodel weights file must be an XIR graph (serial_v2.Graph)' },
      ]);
    }
    throw err;
  } finally {
    stream.destroy();
  }
}
