import { z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';

/** One PAC configuration as `xlnx-config -q` lists it (docs/api.md, "PACs"). */
export const PacRecordSchema = z
  .object({
    name: z.string().openapi({ example: 'zcu104-platform-cfg1' }),
    active: z.boolean(),
    board: z.string().openapi({ description: 'The board the assets are for, as the table header names it', example: 'zcu104' }),
    assets_dir: z.string().openapi({ example: '/boot/firmware/xlnx-config/test_pac/hwconfig/cfg1/zcu104' }),
  })
  .openapi('PacRecord');

const boardId = z.string().uuid();
const pacs = z.array(PacRecordSchema);
const active = z.string().nullable().openapi({ description: "The active PAC's name, or null when none is active" });

/** Row 10's answer (and the `result` of a `pac_query` operation). */
export const PacQueryAnswerSchema = z.object({ board_id: boardId, pacs, active }).openapi('PacQueryAnswer');
export type PacQueryAnswer = z.infer<typeof PacQueryAnswerSchema>;

/** Row 12's answer (and the `result` of a `pac_install` operation). */
export const PacInstallAnswerSchema = z
  .object({ board_id: boardId, pac: z.string().openapi({ description: 'The installed PAC folder' }), pacs, active })
  .openapi('PacInstallAnswer');
export type PacInstallAnswer = z.infer<typeof PacInstallAnswerSchema>;

/** A PAC name as the API takes it: what `xlnx-config -q` lists in its first column. */
export const PacName = safeString()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .openapi({ description: 'A PAC configuration name as the query lists it', example: 'zcu104-platform-cfg1' });

/** The params a `pac_activate` operation is created with. */
export const ActivateParams = z.object({ pac: PacName });

/** The params a `pac_install` operation is created with. */
export const InstallParams = z.object({
  /** Absent for a rollout's step: the run offers the stored archive (`sha256`) to its board itself. */
  upload_id: z.string().min(1).optional(),
  sha256: z.string(),
  size: z.number().int().nonnegative(),
  filename: z.string(),
});
export type InstallParams = z.infer<typeof InstallParams>;
