import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildRunMetrics, MAX_METRICS_BYTES, parseRunnerMetrics, readRunnerMetrics } from '../src/runner/run-metrics.ts';
import { simulatedMetrics, simulatedNoise, simulatedSpeed } from '../src/simulate/simulated-metrics.ts';

const dirs: string[] = [];
async function outputDir(metrics?: string | Buffer): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-metrics-'));
  dirs.push(dir);
  if (metrics !== undefined) await fs.writeFile(path.join(dir, 'metrics.json'), metrics);
  return dir;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

describe("the runner's metrics.json", () => {
  it('takes a flat object of names to finite numbers', async () => {
    expect(await readRunnerMetrics(await outputDir('{"fps": 29.5, "latency_ms": 34, "frames_2": 0}'))).toEqual({
      kind: 'ok',
      metrics: { fps: 29.5, latency_ms: 34, frames_2: 0 },
    });
  });

  it('no file: no metrics and nothing to say', async () => {
    expect(await readRunnerMetrics(await outputDir())).toEqual({ kind: 'none' });
  });

  const bad: Array<[string, string, RegExp]> = [
    ['not JSON', '{fps: 1', /not JSON/],
    ['NaN (not JSON either)', '{"fps": NaN}', /not JSON/],
    ['an array', '[1, 2]', /JSON object .* not an array/],
    ['a number', '42', /not number/],
    ['null', 'null', /not null/],
    ['a string value', '{"fps": "30"}', /fps is "30", not a finite number/],
    ['a nested object', '{"fps": {"a": 1}}', /fps is \{"a":1\}, not a finite number/],
    ['a bad name', '{"Fps": 1}', /the name "Fps" is not/],
    ['a name too long', `{"${'a'.repeat(65)}": 1}`, /is not \[a-z\]/],
    ['a huge number that overflows to Infinity', '{"fps": 1e999}', /fps is Infinity, not a finite number/],
    ['10,000 keys', JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`m${i}`, i]))), /10000 names, at most 64/],
  ];
  it.each(bad)('ignores %s with a clear reason', async (_what, text, reason) => {
    const r = await readRunnerMetrics(await outputDir(text));
    if (text.length > MAX_METRICS_BYTES) {
      expect(r).toEqual({ kind: 'ignored', problem: expect.stringMatching(/bytes, at most 16384 are read/) });
      expect(parseRunnerMetrics(text)).toEqual({ kind: 'ignored', problem: expect.stringMatching(reason) });
      return;
    }
    expect(r.kind).toBe('ignored');
    expect(r.kind === 'ignored' && r.problem).toMatch(/^metrics\.json ignored: /);
    expect(r.kind === 'ignored' && r.problem).toMatch(reason);
  });

  it('65 names is one too many; 64 is fine', () => {
    const of = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, i])));
    expect(parseRunnerMetrics(of(64)).kind).toBe('ok');
    expect(parseRunnerMetrics(of(65))).toEqual({ kind: 'ignored', problem: expect.stringMatching(/65 names/) });
  });

  it('refuses a 10 MB file by its size, without reading it', async () => {
    const dir = await outputDir(Buffer.alloc(10 * 1024 * 1024, 0x20));
    expect(await readRunnerMetrics(dir)).toEqual({ kind: 'ignored', problem: `metrics.json ignored: ${10 * 1024 * 1024} bytes, at most ${MAX_METRICS_BYTES} are read` });
  });

  it('does not open a FIFO or follow a link to a device', async () => {
    const dir = await outputDir();
    await fs.symlink('/dev/zero', path.join(dir, 'metrics.json'));
    expect(await readRunnerMetrics(dir)).toEqual({ kind: 'ignored', problem: 'metrics.json ignored: not a regular file' });
  });

  it('result.metrics: the runner names plus run_ms, which is the agent\'s own', () => {
    expect(buildRunMetrics({ runMs: 1234.4, runner: { fps: 30, run_ms: 1 } })).toEqual({ fps: 30, run_ms: 1234 });
    expect(buildRunMetrics({ runMs: 5, runner: undefined })).toEqual({ run_ms: 5 });
  });

  it("keeps a runner's own power and temperature over the agent's coarser ones, and fills in those it lacks", () => {
    const measured = { max_temperature_c: 60, mean_power_w: 9 };
    expect(buildRunMetrics({ runMs: 10, runner: { fps: 3 }, measured })).toEqual({ fps: 3, run_ms: 10, max_temperature_c: 60, mean_power_w: 9 });
    expect(buildRunMetrics({ runMs: 10, runner: { mean_power_w: 10.5, energy_mj_per_frame: 80 }, measured })).toEqual({
      mean_power_w: 10.5,
      energy_mj_per_frame: 80,
      run_ms: 10,
      max_temperature_c: 60,
    });
  });
});

describe("the simulated runner's metrics", () => {
  it('follow the sim/speed label', () => {
    expect(simulatedSpeed(undefined)).toBe(1);
    expect(simulatedSpeed('{"sim/speed":"2"}')).toBe(2);
    expect(simulatedSpeed('{"sim/speed":"-1"}')).toBe(1);
    expect(simulatedSpeed('{"sim/speed":"fast"}')).toBe(1);
    expect(simulatedSpeed('not json')).toBe(1);
    expect(simulatedMetrics(1)).toEqual({ fps: 30, latency_ms: 33.33 });
    expect(simulatedMetrics(0.5)).toEqual({ fps: 15, latency_ms: 66.67 });
  });

  it('add the relative noise of the sim/noise label', () => {
    expect(simulatedNoise(undefined)).toBe(0);
    expect(simulatedNoise('{"sim/noise":"0.02"}')).toBe(0.02);
    expect(simulatedNoise('{"sim/noise":"2%"}')).toBeCloseTo(0.02, 12);
    expect(simulatedNoise('{"sim/noise":"loud"}')).toBe(0);
    expect(simulatedNoise('{"sim/noise":"0.9"}')).toBe(0);
    // A seeded generator: 4,000 draws at 2 % have a mean near 30 and a relative SD near 2 %.
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) + 1) / 2 ** 31;
    const fps = Array.from({ length: 4000 }, () => simulatedMetrics(1, 0.02, random).fps);
    const mean = fps.reduce((a, b) => a + b, 0) / fps.length;
    const sd = Math.sqrt(fps.reduce((a, b) => a + (b - mean) ** 2, 0) / (fps.length - 1));
    expect(mean).toBeGreaterThan(29.9);
    expect(mean).toBeLessThan(30.1);
    expect(sd / mean).toBeGreaterThan(0.018);
    expect(sd / mean).toBeLessThan(0.022);
    expect(simulatedMetrics(1, 0, random)).toEqual({ fps: 30, latency_ms: 33.33 });
  });
});
