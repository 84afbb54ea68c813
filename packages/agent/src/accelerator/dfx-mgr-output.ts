import type { AppRecord } from '@mm/protocol';

/**
 * What `dfx-mgr-client` (and `xmutil`, which only runs it) prints, read into records. Two
 * generations of the tool are in use:
 *
 * - 2022.x–2023.x (Kria Ubuntu 22.04): `-listPackage` prints a table of right-aligned
 *   columns `Accelerator  Accel_type  Base  Base_type  #slots(PL+AIE)  Active_slot`, where
 *   `Active_slot` is `-1` or the slots it holds (`0,`); `-load <name>` prints
 *   `<name>: loaded to slot 0` or `<name>: load Error: -1` (2022.1: `Accelerator loaded to
 *   slot <n>`, -1 on failure); `-remove <slot>` prints `remove from slot 0 returns: 0 (Ok)`
 *   (2022.1: `Accelerator successfully removed.`).
 * - 2024.x and later: `-listPackage` prints `ID accelType Base slotLoc Accelerator` rows under
 *   a dashed rule, loads go `-loadByName <name>` (`... Loaded with slot_handle 0`, or
 *   `Load Error: No empty slot for ...`), unloads `-unloadByName <name>`.
 *
 * Every variant exits 0 whatever happened, so nothing here looks at exit statuses: the
 * listing after a load is what says whether it worked.
 */

export type ListingStyle = 'table' | 'ids';

export interface AppListing {
  apps: AppRecord[];
  /** Which generation printed it: it decides how to load and unload. */
  style: ListingStyle;
}

export class ListingUnrecognised extends Error {}

const TABLE_HEADER = /^\s*Accelerator\s+Accel_type\s+Base\s+Base_type\s+/;
const IDS_HEADER = /^\s*ID\s+accelType\s+.*\bAccelerator\s*$/;

/** Parses a `-listPackage` (or `xmutil listapps`) output; throws ListingUnrecognised when it is neither format. */
export function parseAppListing(output: string): AppListing {
  const lines = output.split(/\r?\n/);
  const tableAt = lines.findIndex((l) => TABLE_HEADER.test(l));
  if (tableAt >= 0) return { style: 'table', apps: parseTable(lines.slice(tableAt + 1)) };
  const idsAt = lines.findIndex((l) => IDS_HEADER.test(l));
  if (idsAt >= 0) return { style: 'ids', apps: parseIds(lines.slice(idsAt + 1)) };
  const sample = output.trim().split('\n').slice(0, 3).join(' / ');
  throw new ListingUnrecognised(`the app listing is in no format known here${sample ? `: ${sample.slice(0, 300)}` : ' (it printed nothing)'}`);
}

/** Accelerator types dfx-mgr prints, longest first (to split cells that ran together). */
const ACCEL_TYPES = ['XRT_AIE_DFX', 'XRT_PL_DFX', 'SIHA_PL_DFX', 'XRT_FLAT', 'PL_FLAT', 'PL_DFX', 'RPU'];

/**
 * `name type base base_type (p+a) active` rows; `active` is -1 or `0,` / `0,1,`. The columns
 * are `%32s%20s%32s...` without separators: a name longer than 32 characters runs into the next
 * cell (`XRT_FLATsome-long-name`), so rows are read from the `(p+a)` cell outwards.
 */
function parseTable(rows: string[]): AppRecord[] {
  const apps: AppRecord[] = [];
  for (const row of rows) {
    const cells = row.trim().split(/\s+/);
    const anchor = cells.findIndex((c) => /^\(\d+\+\d+\)$/.test(c));
    if (anchor < 3 || anchor !== cells.length - 2) continue;
    const active = cells[anchor + 1]!;
    let head = cells.slice(0, anchor - 1);
    if (head.length === 2) {
      // name, then type and base run together.
      const type = ACCEL_TYPES.find((t) => head[1]!.startsWith(t) && head[1]!.length > t.length);
      if (!type) continue;
      head = [head[0]!, type, head[1]!.slice(type.length)];
    }
    if (head.length !== 3) continue;
    const [name, type, base] = head as [string, string, string];
    const slots = active
      .split(',')
      .filter((s) => s !== '')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n >= 0);
    apps.push(record(name, type, base, slots[0]));
  }
  return apps;
}

/** ` 1 XRT_FLAT  base  -1  name` rows (the simplified view), or the `-all` view's (slotLoc third from the end). */
function parseIds(rows: string[]): AppRecord[] {
  const apps: AppRecord[] = [];
  for (const row of rows) {
    const cells = row.trim().split(/\s+/);
    if (!/^\d+$/.test(cells[0] ?? '') || cells.length < 5) continue;
    const name = cells.at(-1)!;
    const type = cells[1]!;
    const base = cells.length >= 12 ? cells[4]! : cells[2]!;
    const slot = Number(cells.length >= 12 ? cells.at(-3) : cells[3]);
    apps.push(record(name, type, base.endsWith('...') ? undefined : base, Number.isInteger(slot) && slot >= 0 ? slot : undefined));
  }
  return apps;
}

function record(name: string, type: string, base: string | undefined, slot: number | undefined): AppRecord {
  return {
    name,
    type,
    ...(base !== undefined ? { base } : {}),
    active: slot !== undefined,
    ...(slot !== undefined ? { slot } : {}),
  };
}

export type LoadOutcome =
  | { kind: 'loaded'; slot: number }
  | { kind: 'no_empty_slot' }
  | { kind: 'not_found' }
  | { kind: 'failed' }
  /** Nothing recognisable: only the listing can tell. */
  | { kind: 'unknown' };

/** What a load printed. A message about the slot wins over a generic error. */
export function parseLoadOutput(output: string): LoadOutcome {
  if (/no empty slot/i.test(output)) return { kind: 'no_empty_slot' };
  if (/no package found|no accel found|no accel with name/i.test(output)) return { kind: 'not_found' };
  if (/load error|unable to load|failed to load|error:/i.test(output)) return { kind: 'failed' };
  const loaded = /(?:loaded to slot|loaded with slot_handle)\s+(-?\d+)/i.exec(output);
  if (loaded) {
    const slot = Number(loaded[1]);
    return slot >= 0 ? { kind: 'loaded', slot } : { kind: 'failed' };
  }
  return { kind: 'unknown' };
}

/** What an unload printed: ok, failed, or unknown (the listing tells). */
export function parseUnloadOutput(output: string): 'ok' | 'failed' | 'unknown' {
  if (/returns:\s*-?\d+\s*\(error\)|error trying to remove|\(error\)/i.test(output)) return 'failed';
  if (/returns:\s*0\s*\(ok\)|successfully removed/i.test(output)) return 'ok';
  return 'unknown';
}
