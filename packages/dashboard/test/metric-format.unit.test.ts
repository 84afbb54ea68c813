import { describe, expect, it } from 'vitest';
import { formatMetric, metricTitle } from '../src/lib/format.ts';
import { rolloutTable, type Rollout } from '../../cli/src/rollout-follow.ts';
import { metricValue } from '../../cli/src/metrics-format.ts';

/**
 * Issue 39 (6, 18): one formatting of metrics with units, the same in every page and in `mm`.
 * The dashboard's lib/format.ts is the only formatter its pages import; `mm`'s lines use the same.
 */
describe('one metric formatter for the dashboard and mm', () => {
  it('shows run times of a second or more in seconds, and every value with its unit', () => {
    expect(formatMetric('run_ms', 14296)).toBe('14.3 s');
    expect(formatMetric('run_ms', 850)).toBe('850 ms');
    expect(formatMetric('max_temperature_c', 68.2)).toBe('68.2 °C');
    expect(formatMetric('mean_power_w', 4.2)).toBe('4.20 W');
    expect(formatMetric('fps', 29.97)).toBe('30.0 fps');
    expect(metricTitle('run_ms')).toBe('Run time (ms)');
    expect(metricTitle('max_temperature_c')).toBe('Max temperature (°C)');
  });

  it('mm prints a metric as the dashboard shows it', () => {
    for (const [name, v] of [
      ['run_ms', 14296],
      ['latency_ms', 12.345],
      ['max_temperature_c', 68.2],
      ['fps', 120],
    ] as const)
      expect(metricValue(name, v)).toBe(formatMetric(name, v));
  });

  it('mm rollouts show: a failed row gives its reason, the times and metrics with units', () => {
    const board = (over: Partial<Rollout['boards'][number]>): Rollout['boards'][number] => ({
      board_id: '00000000-0000-4000-8000-000000000001',
      board_name: 'kv260-a',
      operation_id: 1,
      status: 'succeeded',
      phase: 0,
      run_ms: 1520,
      metrics: { fps: 29.97, max_temperature_c: 61.25, run_ms: 1520 },
      board_offline_since: null,
      error: null,
      ...over,
    });
    const r = {
      boards: [
        board({}),
        board({ board_name: 'kv260-b', status: 'failed', run_ms: 14296, metrics: null, error: { code: 'exit_code', message: 'the runner exited with status 3' } }),
      ],
    } as unknown as Rollout;
    const lines = rolloutTable(r).split('\n');
    expect(lines[0]).toMatch(/^BOARD\s+STATUS\s+TIME\s+FRAMES PER SECOND\s+MAX TEMPERATURE\s+REASON/);
    expect(lines[1]).toMatch(/kv260-a\s+succeeded\s+1\.52 s\s+30\.0 fps\s+61\.3 °C/);
    // The failed step's time is the time until it failed, said so; its reason is on its row.
    expect(lines[2]).toMatch(/kv260-b\s+failed\s+failed after 14\.30 s\s+.*the runner exited with status 3 \(exit_code\)/);
  });
});
