import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Logger } from './logger.ts';
import type { BlobStore } from './storage/blob-store.ts';

/**
 * What the storage-level services (invocations, their files, uploads) work with: the
 * settings, the database, the blob store and the log. The composition root's `Services`
 * has these and more; functions take only this much so they sit below everything else.
 */
export interface StoreContext {
  config: Config;
  database: Database;
  files: BlobStore;
  log: Logger;
}
