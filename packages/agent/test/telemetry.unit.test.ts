import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, TelemetryReading } from '@mm/protocol';
import { createLogger } from '../src/logger.ts';
import { simulatedSensors } from '../src/simulate/simulated-sensors.ts';
import { simulatedBoardSize } from '../src/simulate/simulated-host-tree.ts';
import { readHwmon, sensorName } from '../src/telemetry/hwmon.ts';
import { readDiskFree, readLoad1m, readMemoryUsed } from '../src/telemetry/system-readings.ts';
import { TelemetrySampler, type SensorSource } from '../src/telemetry/telemetry-sampler.ts';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await fsp.rm(r, { recursive: true, force: true });
});

/** A root folder holding `sys/class/hwmon/hwmon<N>/<file>` = content for each device given. */
async function hwmonTree(devices: Array<Record<string, string>>, extra: Record<string, string> = {}): Promise<string> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-hwmon-'));
  roots.push(root);
  for (const [i, files] of devices.entries()) {
    const dir = path.join(root, 'sys/class/hwmon', `hwmon${i}`);
    await fsp.mkdir(dir, { recursive: true });
    for (const [name, content] of Object.entries(files)) await fsp.writeFile(path.join(dir, name), `${content}\n`);
  }
  for (const [file, content] of Object.entries(extra)) {
    await fsp.mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fsp.writeFile(path.join(root, file), content);
  }
  return root;
}

/** The AMS as iio-hwmon shows it on a ZCU104: PS (LPD, FPD) and PL temperatures, and a voltage. */
const ams = (pl: string) => ({
  name: 'ams',
  temp1_input: '47312',
  temp1_label: 'PS LPD Temp',
  temp2_input: '48120',
  temp2_label: 'PS FPD Temp',
  temp3_input: pl,
  temp3_label: 'PL Temp',
  in1_input: '850',
});

describe('hwmon readings', () => {
  it('reads the AMS PS and PL temperatures by sensor name, in °C', async () => {
    const root = await hwmonTree([ams('52875')]);
    expect(await readHwmon(root)).toEqual({ temperatures_c: { 'ams.ps_lpd_temp': 47.31, 'ams.ps_fpd_temp': 48.12, 'ams.pl_temp': 52.88 } });
  });

  it('leaves out the PL temperature when the PL monitor is absent (raw 0: about −280 °C)', async () => {
    const root = await hwmonTree([ams('-280230')]);
    const { temperatures_c } = await readHwmon(root);
    expect(temperatures_c).toEqual({ 'ams.ps_lpd_temp': 47.31, 'ams.ps_fpd_temp': 48.12 });
  });

  it('leaves out a temperature whose read fails, and one that is not a number', async () => {
    const root = await hwmonTree([{ name: 'ams', temp1_input: '47000', temp2_input: 'garbage' }]);
    // A read that fails (the driver answers an error): here a folder where the file should be.
    await fsp.mkdir(path.join(root, 'sys/class/hwmon/hwmon0/temp3_input'));
    expect(await readHwmon(root)).toEqual({ temperatures_c: { 'ams.temp1': 47 } });
  });

  it('reads power from ina260 monitors (µW, summed), and names temperatures without a label by input', async () => {
    const root = await hwmonTree([
      { name: 'ina260', power1_input: '6412500', curr1_input: '534', in1_input: '12000' },
      { name: 'ina260', power1_input: '1250000' },
      { name: 'cpu_thermal', temp1_input: '45500' },
      { name: 'ina226', power1_input: '9990000' },
    ]);
    expect(await readHwmon(root)).toEqual({ temperatures_c: { 'cpu_thermal.temp1': 45.5 }, power_w: 7.663 }); // to the milliwatt
  });

  it('tells two devices of one name apart by their folder', async () => {
    const root = await hwmonTree([
      { name: 'tmp102', temp1_input: '30000' },
      { name: 'tmp102', temp1_input: '31000' },
    ]);
    expect((await readHwmon(root)).temperatures_c).toEqual({ 'tmp102.temp1': 30, 'tmp102_hwmon1.temp1': 31 });
  });

  it('keeps at most 32 sensors (what the link takes), the first in hwmon order', async () => {
    const many = Object.fromEntries([['name', 'big'], ...Array.from({ length: 40 }, (_, i) => [`temp${i + 1}_input`, String(40_000 + i * 100)])]);
    const { temperatures_c } = await readHwmon(await hwmonTree([many]));
    expect(Object.keys(temperatures_c)).toHaveLength(32);
    expect(temperatures_c['big.temp32']).toBe(43.1);
    expect(temperatures_c['big.temp33']).toBeUndefined();
  });

  it('gives no temperatures and no power on a board without hwmon', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-hwmon-'));
    roots.push(root);
    expect(await readHwmon(root)).toEqual({ temperatures_c: {} });
    expect(await readHwmon(await hwmonTree([{ name: 'empty' }]))).toEqual({ temperatures_c: {} });
  });

  it('makes sensor names the link accepts', () => {
    expect(sensorName('ams', 'PS LPD Temp')).toBe('ams.ps_lpd_temp');
    expect(sensorName('', '')).toBe('hwmon.temp');
    expect(sensorName('x'.repeat(80), 'y').length).toBe(64);
  });
});

describe('system readings', () => {
  it('reads memory used, load and free disk from the root it is given', async () => {
    const root = await hwmonTree([], {
      'proc/meminfo': 'MemTotal:        4028724 kB\nMemFree:          812220 kB\nMemAvailable:    3012700 kB\nBuffers:           41120 kB\n',
      'proc/loadavg': '0.42 0.30 0.25 1/234 5678\n',
    });
    expect(await readMemoryUsed(root)).toBe((4028724 - 3012700) * 1024);
    expect(await readLoad1m(root)).toBe(0.42);
    expect(await readDiskFree(root)).toBeGreaterThan(0);
  });

  it('estimates memory without MemAvailable (old kernels), and says undefined for what it cannot read', async () => {
    const root = await hwmonTree([], { 'proc/meminfo': 'MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n' });
    expect(await readMemoryUsed(root)).toBe(600 * 1024);
    expect(await readLoad1m(root)).toBeUndefined();
    expect(await readDiskFree(path.join(root, 'no-such-folder'))).toBeUndefined();
  });
});

describe('the sampler', () => {
  const log = createLogger('silent');

  it('sends full readings that the link schema accepts', async () => {
    const root = await hwmonTree([ams('52000'), { name: 'ina260', power1_input: '8000000' }], {
      'proc/meminfo': 'MemTotal: 2000 kB\nMemAvailable: 500 kB\n',
      'proc/loadavg': '1.5 1 1 1/1 1\n',
    });
    const sent: unknown[] = [];
    const sampler = new TelemetrySampler({
      sensors: { readSensors: () => readHwmon(root) },
      root,
      agentDir: root,
      intervalMs: 30_000,
      send: (r) => sent.push(r) > 0,
      log,
    });
    await sampler.sendNow();
    expect(sent).toHaveLength(1);
    const reading = TelemetryReading.parse(sent[0]);
    expect(reading).toMatchObject({ power_w: 8, memory_used_bytes: 1500 * 1024, load_1m: 1.5 });
    expect(reading.temperatures_c['ams.pl_temp']).toBe(52);
    expect(reading.disk_free_bytes).toBeGreaterThan(0);
  });

  it('sends every interval, and measures a run: peak temperature and mean power', async () => {
    const clock = new ManualClock();
    let step = 0;
    const script = [
      { temperatures_c: { a: 50, b: 51 }, power_w: 6 },
      { temperatures_c: { a: 60, b: 58 }, power_w: 10 },
      { temperatures_c: { a: 55, b: 70 }, power_w: 11 },
    ];
    const sensors: SensorSource = { readSensors: async () => script[Math.min(step++, script.length - 1)]! };
    const sent: unknown[] = [];
    const root = await hwmonTree([]);
    const sampler = new TelemetrySampler({ sensors, root, agentDir: root, intervalMs: 10_000, runIntervalMs: 1000, send: (r) => sent.push(r) > 0, log, clock });
    sampler.start();
    const watch = sampler.watchRun(); // reads at once (script[0])
    await new Promise((r) => setImmediate(r));
    clock.advance(1000); // script[1]
    await new Promise((r) => setImmediate(r));
    clock.advance(1000); // script[2]
    await new Promise((r) => setImmediate(r));
    expect(watch.stop()).toEqual({ max_temperature_c: 70, mean_power_w: 9 });
    // No more run reads once the watch ended; the interval sends.
    const before = step;
    clock.advance(5000);
    expect(step).toBe(before);
    clock.advance(5000);
    await new Promise((r) => setTimeout(r, 20));
    expect(sent).toHaveLength(1);
    sampler.stop();
  });

  it('measures nothing on a board without sensors', async () => {
    const root = await hwmonTree([]);
    const sampler = new TelemetrySampler({ sensors: { readSensors: () => readHwmon(root) }, root, agentDir: root, intervalMs: 1000, send: () => true, log });
    const watch = sampler.watchRun();
    await new Promise((r) => setTimeout(r, 20));
    expect(watch.stop()).toEqual({});
    sampler.stop();
  });

  it('simulates a board that warms up during a run and cools after', async () => {
    let now = 0;
    const sim = simulatedSensors(() => now, () => 0.5);
    const idle = await sim.readSensors(false);
    expect(idle.temperatures_c['ams.ps_temp']).toBeGreaterThanOrEqual(45);
    expect(idle.temperatures_c['ams.ps_temp']).toBeLessThanOrEqual(55);
    expect(idle.power_w).toBeGreaterThanOrEqual(6);
    now += 30_000;
    const hot = await sim.readSensors(true);
    expect(hot.temperatures_c['ams.pl_temp']!).toBeGreaterThan(idle.temperatures_c['ams.pl_temp']! + 10);
    expect(hot.power_w).toBeGreaterThan(10);
    expect(hot.power_w).toBeLessThanOrEqual(12);
    now += 120_000;
    const cooled = await sim.readSensors(false);
    expect(cooled.temperatures_c['ams.pl_temp']!).toBeLessThan(idle.temperatures_c['ams.pl_temp']! + 1);
  });
});

describe('the simulated board\'s own memory and load (issue 39, item 19)', () => {
  it('a simulated KV260 reports its 4 GB and 4 cores, never the host\'s, idle and while a run lasts', async () => {
    const size = simulatedBoardSize('kv260');
    expect(size).toEqual({ memTotalBytes: 4_021_740 * 1024, cpus: 4 });
    let now = 0;
    const sampler = new TelemetrySampler({
      sensors: simulatedSensors(() => now, () => 0.5, size),
      root: '/', // the host's proc/: the simulated board must not read it
      agentDir: os.tmpdir(),
      intervalMs: 60_000,
      send: () => true,
      log: createLogger('silent'),
    });
    const idle = await sampler.read();
    expect(idle.memory_used_bytes).toBeGreaterThan(size.memTotalBytes * 0.2);
    expect(idle.memory_used_bytes).toBeLessThan(size.memTotalBytes * 0.4);
    expect(idle.load_1m).toBeLessThan(0.5);
    const watch = sampler.watchRun();
    let busy = idle;
    for (let i = 0; i < 20; i++) {
      now += 5_000;
      busy = await sampler.read();
    }
    watch.stop();
    expect(busy.memory_used_bytes).toBeGreaterThan(idle.memory_used_bytes);
    expect(busy.memory_used_bytes).toBeLessThan(size.memTotalBytes);
    expect(busy.load_1m).toBeGreaterThan(1);
    expect(busy.load_1m).toBeLessThanOrEqual(size.cpus);
    sampler.stop();
  });
});
