import { z } from '@hono/zod-openapi';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { AppName } from './accelerator-schemas.ts';

/**
 * The rollout kinds of accelerated applications (docs/accelerators.md): `app_install`
 * (`params.archive_sha256`: an app archive stored on the server, uploaded on its own) and
 * `app_load` (`params.app`). Each board's step is the operation its single-board route starts.
 */
export const APP_ROLLOUT_KINDS = ['app_install', 'app_load'] as const;
export type AppRolloutKind = (typeof APP_ROLLOUT_KINDS)[number];

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 (64 lower-case hex digits)');

/**
 * Checks an app rollout's params; answers those to store. An `app_install` archive is pinned
 * here (the caller records it and releases the pin, as for `pac_install`).
 */
export async function checkAppRolloutParams(kind: AppRolloutKind, params: Record<string, unknown>, files: BlobStore): Promise<Record<string, unknown>> {
  const field = (name: string, message: string) => new ValidationError([{ field: `params.${name}`, message }]);
  if (kind === 'app_load') {
    const app = AppName.safeParse(params.app);
    if (!app.success) throw field('app', 'required: the name of the app to load, as the boards list it');
    return { app: app.data };
  }
  const sha = Sha256.safeParse(params.archive_sha256);
  if (!sha.success) throw field('archive_sha256', 'required: the sha256 of the app archive (.tar, .tar.gz or .zip)');
  const pinned = await files.pin(sha.data);
  const stat = pinned ? await files.stat(sha.data) : undefined;
  if (!stat) {
    if (pinned) files.release(sha.data);
    throw new NotFoundError('content_not_found', `The server holds no content with sha256 ${sha.data}: upload the archive first (POST /api/uploads/ with that sha256).`);
  }
  const filename = typeof params.filename === 'string' && params.filename.length > 0 && params.filename.length <= 255 ? params.filename : `${sha.data.slice(0, 12)}.tar.gz`;
  return { archive_sha256: sha.data, size: stat.size, filename };
}

/** One board's step of an app rollout, as `operations.create` takes it. */
export function appRolloutStep(kind: AppRolloutKind, params: Record<string, unknown>, boardId: string) {
  if (kind === 'app_load') return { kind, boardId, params: { app: params.app } };
  // No upload id: the run offers the stored archive to its board itself (app-operations.ts).
  return { kind, boardId, params: { sha256: params.archive_sha256, size: params.size, filename: params.filename } };
}
