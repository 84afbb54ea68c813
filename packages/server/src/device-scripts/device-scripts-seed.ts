import { GPIO_MOTOR_SCRIPT } from '@mm/gpio-motor';
import { WEBCAM_SCRIPT } from '@mm/webcam/frames';
import type { Db } from '../db/database.ts';
import { deviceScripts, meta } from '../db/schema.ts';
import { toDeviceScriptColumns } from './script-catalogue.ts';

/** The `meta` key recording that the catalogue was seeded (its value: when). */
export const DEVICE_SCRIPTS_SEEDED_KEY = 'device_scripts.seeded';

/**
 * On the first start of a database the catalogue gets its built-in entries, the GPIO
 * motor script and the webcam script. The `meta` row makes this happen once: an operator
 * who deletes an entry does not get it back on the next restart. Both writes share a transaction, so a crash
 * in between seeds again rather than never.
 */
export async function seedDeviceScripts(db: Db): Promise<{ seeded: boolean }> {
  return db.transaction(async (tx) => {
    const claimed = await tx
      .insert(meta)
      .values({ key: DEVICE_SCRIPTS_SEEDED_KEY, value: { at: new Date().toISOString() } })
      .onConflictDoNothing({ target: meta.key })
      .returning({ key: meta.key });
    if (claimed.length === 0) return { seeded: false };
    await tx.insert(deviceScripts).values([toDeviceScriptColumns(GPIO_MOTOR_SCRIPT), toDeviceScriptColumns(WEBCAM_SCRIPT)]);
    return { seeded: true };
  });
}
