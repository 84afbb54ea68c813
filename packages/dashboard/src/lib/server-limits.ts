import { client, unwrap } from '../api/client.ts';

let limit: Promise<number | undefined> | undefined;

/** The server's largest upload (`max_upload_bytes` of `/api/health/`), asked once; undefined from an older server. */
export function maxUploadBytes(): Promise<number | undefined> {
  limit ??= unwrap(client.GET('/api/health/')).then(
    (h) => h.max_upload_bytes,
    () => {
      limit = undefined; // asked again next time
      return undefined;
    },
  );
  return limit;
}
