import path from 'node:path';
import type { Config } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { ContentStore } from './content-store.ts';

/**
 * The BlobStore `MM_BLOB_STORE` names: the data folder's `content/` (`fs`) or the
 * S3-compatible store (`s3`). The S3 client is loaded only when it is used: a server on the
 * fs store never pays for the AWS SDK's modules.
 */
export async function createBlobStore(config: Pick<Config, 'blobStore' | 's3' | 'dataDir'>): Promise<BlobStore> {
  if (config.blobStore === 's3') {
    if (!config.s3) throw new Error('MM_BLOB_STORE=s3 without S3 settings');
    const { S3BlobStore } = await import('./s3-blob-store.ts');
    return new S3BlobStore(config.s3);
  }
  return new ContentStore(path.join(config.dataDir, 'content'));
}
