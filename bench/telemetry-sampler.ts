/**
 * What the agent's telemetry costs on a board. By hand, prints figures; not a test (the
 * tests are packages/agent/test/telemetry.unit.test.ts and test/e2e/board-telemetry.test.ts):
 *
 *   npx tsx bench/telemetry-sampler.ts [--reads 2000]
 *
 * Builds a hwmon tree shaped like a ZCU104's (the AMS with PS LPD/FPD and PL temperatures and
 * its voltages, an ina260, a few more devices) in a temporary folder, then times `--reads`
 * full readings (hwmon, the real /proc/meminfo and /proc/loadavg, statfs) and as many
 * sensor-only readings (what a run adds every 2 s), in CPU time of this process. Prints the CPU
 * per reading and per hour at the default 30 s interval, and the bytes one `board.telemetry`
 * message takes on the link (JSON text plus the WebSocket frame header and mask of a
 * client's frame), per hour too. An A53 core runs this kind of code several times slower
 * than this machine: scale the CPU figures accordingly.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BoardTelemetry } from '@mm/protocol';
import { createLogger } from '../packages/agent/src/logger.ts';
import { readHwmon } from '../packages/agent/src/telemetry/hwmon.ts';
import { TelemetrySampler } from '../packages/agent/src/telemetry/telemetry-sampler.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const reads = arg('--reads', 2000);
const INTERVAL_S = 30;
const PER_HOUR = 3600 / INTERVAL_S;

const devices: Array<Record<string, string>> = [
  {
    name: 'ams',
    temp1_input: '47312', temp1_label: 'PS LPD Temp',
    temp2_input: '48120', temp2_label: 'PS FPD Temp',
    temp3_input: '52875', temp3_label: 'PL Temp',
    ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`in${i}_input`, String(800 + i)])),
  },
  { name: 'ina260', power1_input: '6412500', curr1_input: '534', in1_input: '12000' },
  { name: 'ina226_u79', power1_input: '950000', in1_input: '850' },
  { name: 'cpu_thermal', temp1_input: '46000' },
  { name: 'iio_hwmon', in1_input: '1200' },
];

const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-hwmon-'));
try {
  for (const [i, files] of devices.entries()) {
    const dir = path.join(root, 'sys/class/hwmon', `hwmon${i}`);
    await fsp.mkdir(dir, { recursive: true });
    for (const [name, content] of Object.entries(files)) await fsp.writeFile(path.join(dir, name), `${content}\n`);
  }
  const sampler = new TelemetrySampler({
    sensors: { readSensors: () => readHwmon(root) },
    root: '/',
    agentDir: root,
    intervalMs: INTERVAL_S * 1000,
    send: () => true,
    log: createLogger('silent'),
  });

  // Warm up (JIT, file cache), then measure.
  for (let i = 0; i < 50; i++) await sampler.read();
  const cpu = (fn: () => Promise<unknown>) => async () => {
    const start = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < reads; i++) await fn();
    const used = process.cpuUsage(start);
    return { cpuMs: (used.user + used.system) / 1000 / reads, wallMs: (performance.now() - t0) / reads };
  };
  const full = await cpu(() => sampler.read())();
  const sensorsOnly = await cpu(() => readHwmon(root))();

  const reading = await sampler.read();
  const message = JSON.stringify(BoardTelemetry.parse({ type: 'board.telemetry', reading }));
  // A client frame: 2-byte header (+2 for 126..65535 bytes of payload) and a 4-byte mask.
  const frameBytes = Buffer.byteLength(message) + (Buffer.byteLength(message) > 125 ? 4 : 2) + 4;

  const fmt = (n: number, d = 3) => n.toFixed(d);
  console.log(`reads: ${reads} of each kind (node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'})`);
  console.log(`full reading:       ${fmt(full.cpuMs)} ms CPU, ${fmt(full.wallMs)} ms wall each`);
  console.log(`sensors only:       ${fmt(sensorsOnly.cpuMs)} ms CPU, ${fmt(sensorsOnly.wallMs)} ms wall each`);
  console.log(`idle, per hour:     ${PER_HOUR} readings = ${fmt(full.cpuMs * PER_HOUR, 1)} ms CPU (${fmt((full.cpuMs * PER_HOUR) / 36_000, 5)} % of one core)`);
  console.log(`running, per hour:  + ${3600 / 2} sensor reads = ${fmt(sensorsOnly.cpuMs * 1800, 1)} ms CPU more`);
  console.log(`message:            ${Buffer.byteLength(message)} bytes of JSON, ${frameBytes} bytes in a frame`);
  console.log(`link, per hour:     ${PER_HOUR} messages = ${((frameBytes * PER_HOUR) / 1024).toFixed(1)} KiB (before TCP/TLS overhead)`);
  console.log(`sample message:     ${message}`);
} finally {
  await fsp.rm(root, { recursive: true, force: true });
}
