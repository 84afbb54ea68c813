import fsp from 'node:fs/promises';
import path from 'node:path';

/** What the board's hwmon devices say: temperatures by sensor name, and power where an `ina260` measures it. */
export interface HwmonReadings {
  temperatures_c: Record<string, number>;
  power_w?: number;
}

/**
 * Temperatures outside this range are not readings. The Zynq UltraScale+ `xilinx-ams`
 * driver only sets up the PL SYSMON when its AMS_PL_CSTS register says the PL monitor is
 * reachable; when it is not, the PL channels still exist and read their unconfigured
 * register as raw 0, which the driver's offset and scale turn into about −280 °C
 * (−280230 millidegrees in `temp*_input`). A read that fails (EIO, ENODEV…) is left out too.
 */
export const PLAUSIBLE_CELSIUS = { min: -60, max: 200 } as const;

/** The link takes at most this many sensors in a reading (the first ones, in hwmon order, are kept). */
export const MAX_SENSORS = 32;

/** Power monitors whose `power1_input` (microwatts) is the board's power. */
const POWER_MONITORS = new Set(['ina260']);

const TEMP_INPUT = /^temp(\d+)_input$/;

async function readText(file: string): Promise<string | undefined> {
  try {
    return (await fsp.readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

async function readInteger(file: string): Promise<number | undefined> {
  const text = await readText(file);
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  return Number(text);
}

/** `ams` + `PS Temp` → `ams.ps_temp`: lower case, runs of anything else as one `_`. */
export function sensorName(device: string, input: string): string {
  const clean = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '_')
      .replace(/^[_-]+|[_-]+$/g, '');
  return `${clean(device) || 'hwmon'}.${clean(input) || 'temp'}`.slice(0, 64);
}

/**
 * Reads every `<root>/sys/class/hwmon/hwmon*`: each `temp<N>_input` (millidegrees) under
 * the name `<name>.<temp<N>_label or temp<N>>`, leaving out what is not a valid reading;
 * and the sum of the `ina260` monitors' `power1_input` (microwatts) as `power_w`. A board
 * with no hwmon at all gives no temperatures and no power. Two devices of one name are told
 * apart by their hwmon folder.
 */
export async function readHwmon(root: string): Promise<HwmonReadings> {
  const base = path.join(root, 'sys/class/hwmon');
  let entries: string[];
  try {
    entries = (await fsp.readdir(base)).filter((e) => /^hwmon\d+$/.test(e)).sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  } catch {
    return { temperatures_c: {} };
  }
  const temperatures_c: Record<string, number> = {};
  let powerMicrowatts: number | undefined;
  for (const entry of entries) {
    const dir = path.join(base, entry);
    const name = (await readText(path.join(dir, 'name'))) ?? entry;
    if (POWER_MONITORS.has(name)) {
      const uw = await readInteger(path.join(dir, 'power1_input'));
      if (uw !== undefined && uw >= 0) powerMicrowatts = (powerMicrowatts ?? 0) + uw;
    }
    let files: string[];
    try {
      files = await fsp.readdir(dir);
    } catch {
      continue;
    }
    // temp2 before temp10: the order hwmon numbers them in.
    files.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    for (const file of files) {
      const m = TEMP_INPUT.exec(file);
      if (!m || Object.keys(temperatures_c).length >= MAX_SENSORS) continue;
      const milli = await readInteger(path.join(dir, file));
      if (milli === undefined) continue;
      const celsius = milli / 1000;
      if (celsius < PLAUSIBLE_CELSIUS.min || celsius > PLAUSIBLE_CELSIUS.max) continue;
      const label = await readText(path.join(dir, `temp${m[1]}_label`));
      let key = sensorName(name, label || `temp${m[1]}`);
      if (key in temperatures_c) key = sensorName(`${name}_${entry}`, label || `temp${m[1]}`);
      temperatures_c[key] = Math.round(celsius * 100) / 100;
    }
  }
  return powerMicrowatts !== undefined ? { temperatures_c, power_w: Math.round(powerMicrowatts / 1000) / 1000 } : { temperatures_c };
}
