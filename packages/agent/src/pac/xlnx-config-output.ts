import type { PacRecord } from '@mm/protocol';
import { XlnxConfigError } from './pac-errors.ts';

/** The board's PACs as `xlnx-config -q` lists them, and the active one's name. */
export interface PacQueryResult {
  pacs: PacRecord[];
  active: string | null;
}

/**
 * The table header, e.g. `| PAC Cfg                       |Act| zcu104 Assets Directory`.
 * The board name sits before "Assets Directory" (zcu104, zcu102, kv260, kr260, ...).
 */
const TABLE_HEADER = /^\|\s*PAC\s+Cfg\s*\|\s*Act\s*\|\s*(.*?)\s*Assets\s+Directory\s*\|?$/i;
const SEPARATOR = /^[-=+|\s]*-{3,}[-=+|\s]*$/;
const TITLE = /^PAC\s+configurations\s+present\s+in\s+the\s+system:?$/i;
const NONE_ACTIVE = /no\s+configuration\s+is\s+currently\s+activ/i;
/** Lines some versions may print instead of an empty table ("No PAC configurations found"...). */
const NO_PACS = /\bno\s+(?:pacs?|pac\s+configurations?|configurations?|platform\s+assets?)\b.*\b(?:found|present|available|installed)\b/i;
// eslint-disable-next-line no-control-regex
const ANSI_ESCAPE = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/**
 * Parses the output of `xlnx-config -q`:
 *
 * ```
 * PAC configurations present in the system:
 *
 * | PAC Cfg                       |Act| zcu104 Assets Directory
 * ---------------------------------------------------------------------------------------------------------------
 * | zcu104-platform-cfg1          | * | /boot/firmware/xlnx-config/test_pac/hwconfig/cfg1/zcu104
 * ---------------------------------------------------------------------------------------------------------------
 *
 * * No configuration is currently activated *        <- only when none is active
 * ```
 *
 * Columns are split on `|`, not by position: real outputs are not always aligned (a long name
 * pushes its row wider). Rows may or may not be followed by a dashed line. No table at all,
 * a table without rows, or a line saying no PAC is present all mean an empty list. Anything
 * else throws an XlnxConfigError with code `xlnx_config_output_unrecognised`.
 */
export function parseXlnxConfigQuery(output: string): PacQueryResult {
  const lines = output
    .replace(ANSI_ESCAPE, '')
    .split(/\r?\n|\r/)
    .map((line) => line.trim());

  const headerIndex = lines.findIndex((line) => TABLE_HEADER.test(line));
  if (headerIndex === -1) {
    if (looksLikeNoPacs(lines)) return { pacs: [], active: null };
    throw unrecognised(output, 'no "| PAC Cfg |Act| <board> Assets Directory" table header');
  }
  const board = TABLE_HEADER.exec(lines[headerIndex] ?? '')?.[1]?.trim() ?? '';

  const pacs: PacRecord[] = [];
  for (const line of lines.slice(headerIndex + 1)) {
    if (line === '' || SEPARATOR.test(line) || TABLE_HEADER.test(line)) continue;
    if (!line.startsWith('|')) continue; // the "none activated" line, notes, warnings
    pacs.push(parseRow(line, board, output));
  }

  const active = pacs.find((pac) => pac.active)?.name ?? null;
  return { pacs, active };
}

/** `| zcu104-platform-cfg1          | * | /boot/firmware/...` → a record. */
function parseRow(line: string, board: string, output: string): PacRecord {
  const cells = line.slice(1).split('|');
  if (cells.length < 3) throw unrecognised(output, `a table row without three columns: ${JSON.stringify(line)}`);
  const name = (cells[0] ?? '').trim();
  const mark = (cells[1] ?? '').trim();
  // The assets directory is the rest of the line (a path could hold a '|').
  const assetsDir = cells.slice(2).join('|').trim();
  if (name === '') throw unrecognised(output, `a table row without a PAC name: ${JSON.stringify(line)}`);
  if (mark !== '' && mark !== '*') {
    throw unrecognised(output, `an "Act" column holding ${JSON.stringify(mark)} instead of "*" or blank`);
  }
  return { name, active: mark === '*', board, assets_dir: assetsDir };
}

/** True when the output says, one way or another, that there is no PAC at all. */
function looksLikeNoPacs(lines: string[]): boolean {
  const meaningful = lines.filter((line) => line !== '' && !SEPARATOR.test(line));
  if (meaningful.some((line) => NO_PACS.test(line))) return true;
  // The title alone (perhaps with the "none activated" line): a header with nothing under it.
  return (
    meaningful.some((line) => TITLE.test(line)) &&
    meaningful.every((line) => TITLE.test(line) || NONE_ACTIVE.test(line))
  );
}

function unrecognised(output: string, why: string): XlnxConfigError {
  return new XlnxConfigError(
    'xlnx_config_output_unrecognised',
    `xlnx-config -q printed something unrecognised (${why})`,
    output,
  );
}
