import type { HwmonReadings } from '../telemetry/hwmon.ts';
import type { SensorSource } from '../telemetry/telemetry-sampler.ts';
import { simulatedBoardSize } from './simulated-host-tree.ts';

/** The simulated board's sensors at rest and how much a run adds. */
const SENSORS = [
  { name: 'ams.ps_temp', idle: 47, run: 18 },
  { name: 'ams.pl_temp', idle: 51, run: 24 },
] as const;
const POWER_W = { idle: 6.4, run: 4.8 };
/** How fast the board settles towards its idle or running temperature (time constant). */
const THERMAL_TAU_MS = 15_000;

/**
 * Plausible readings for `--simulate`: the Zynq UltraScale+ AMS PS and PL temperatures near
 * 47–51 °C idle, climbing towards ~65–75 °C while a run lasts and cooling off after, with
 * a little noise; an `ina260`'s power near 6.4 W idle and ~11 W running.
 */
export function simulatedSensors(
  now: () => number = Date.now,
  random: () => number = Math.random,
  size: { memTotalBytes: number; cpus: number } = simulatedBoardSize('zcu104'),
): SensorSource {
  let last = now();
  let heat = 0; // 0 idle … 1 fully warmed by a run
  let load = 0.1;
  return {
    // The simulated board's own memory and load (issue 39): about 28 % of its memory in use
    // idle and 45 % while a run lasts; the load average climbing towards 1.5 of its cores
    // running, 0.1 idle. Never the host's (a KV260 showed 4.7 GB used of 3.8 and load 26).
    readSystem: async (running: boolean) => {
      const noise = (span: number) => (random() - 0.5) * span;
      const share = Math.min(0.95, Math.max(0.05, (running ? 0.45 : 0.28) + 0.1 * heat + noise(0.02)));
      load += ((running ? Math.min(size.cpus, 1.5) : 0.1) - load) * 0.3;
      return { memory_used_bytes: Math.round(size.memTotalBytes * share), load_1m: round2(Math.max(0, load + noise(0.04))) };
    },
    readSensors: async (running: boolean): Promise<HwmonReadings> => {
      const t = now();
      const k = 1 - Math.exp(-Math.max(0, t - last) / THERMAL_TAU_MS);
      last = t;
      heat += ((running ? 1 : 0) - heat) * k;
      const noise = (span: number) => (random() - 0.5) * span;
      const temperatures_c: Record<string, number> = {};
      for (const s of SENSORS) temperatures_c[s.name] = round2(s.idle + s.run * heat + noise(0.6));
      const power_w = round2(POWER_W.idle + (running ? POWER_W.run : POWER_W.run * heat * 0.2) + noise(0.3));
      return { temperatures_c, power_w };
    },
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
