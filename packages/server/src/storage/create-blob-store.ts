import path from 'node:path';
import type { Config } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { ContentStore } from './content-store.ts';
import { S3BlobStore } from './s3-blob-store.ts';

/** The BlobStore `MM_BLOB_STORE` names: the data folder's `content/` (`fs`) or the S3-compatible store (`s3`). */
export function createBlobStore(config: Pick<Config, 'blobStore' | 's3' | 'dataDir'>): BlobStore {
  if (config.blobStore === 's3') {
    if (!config.s3) throw new Error('MM_BLOB_STORE=s3 without S3 settings');
    return new S3BlobStore(config.s3);
  }
  return new ContentStore(path.join(config.dataDir, 'content'));
}
