import fs from 'node:fs';
import { WEBCAM_SCRIPT } from '@mm/webcam/frames';
import { and, eq } from 'drizzle-orm';
import { deviceScripts } from '../db/schema.ts';
import type { StoreContext } from '../store-context.ts';
import { attachScriptProgram, scriptProgramOf } from './device-script-programs.ts';

/**
 * So that a development server (`pnpm start`, which sets MM_WEBCAM_PROGRAM to the workspace's
 * webcam bundle) can deploy the webcam from the dashboard: when the file exists, the seeded webcam entry (device type `webcam`, program
 * `mm-webcam.mjs`) that has no program for its current version gets that bundle as its program.
 * An entry that has one (an operator's upload) is never touched. Returns the entries given it.
 */
export async function seedWebcamProgram(ctx: StoreContext, bundle: string): Promise<string[]> {
  if (!fs.statSync(bundle, { throwIfNoEntry: false })?.isFile()) return [];
  const { db } = ctx.database;
  const entries = await db
    .select({ id: deviceScripts.id })
    .from(deviceScripts)
    .where(and(eq(deviceScripts.deviceType, WEBCAM_SCRIPT.device_type), eq(deviceScripts.scriptFilename, WEBCAM_SCRIPT.script_filename)));
  const given: string[] = [];
  for (const { id } of entries) {
    if (await scriptProgramOf(db, id)) continue;
    const stored = await ctx.files.ingest(fs.createReadStream(bundle));
    await attachScriptProgram(ctx, id, { filename: WEBCAM_SCRIPT.script_filename, sha256: stored.sha256, size: stored.size });
    given.push(id);
  }
  return given;
}
