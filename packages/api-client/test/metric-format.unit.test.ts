import { describe, expect, it } from 'vitest';
import { formatChangePercent, formatMetric, metricLabel, metricTitle, metricUnit } from '../src/metric-format.ts';

describe('metric formatting shared by the dashboard and mm', () => {
  it('reads the unit from the name', () => {
    expect(metricUnit('fps').symbol).toBe('fps');
    expect(metricUnit('e2e_fps').symbol).toBe('fps');
    expect(metricUnit('run_ms').symbol).toBe('ms');
    expect(metricUnit('latency_ms_p95').symbol).toBe('ms');
    expect(metricUnit('max_temperature_c').symbol).toBe('°C');
    expect(metricUnit('mean_power_w').symbol).toBe('W');
    expect(metricUnit('energy_mj_per_frame').symbol).toBe('mJ/frame');
    expect(metricUnit('frames').symbol).toBe('');
  });

  it('formats values with their unit; a second or more of ms in seconds', () => {
    expect(formatMetric('max_temperature_c', 68.2)).toBe('68.2 °C');
    expect(formatMetric('run_ms', 14296)).toBe('14.3 s');
    expect(formatMetric('run_ms', 312)).toBe('312 ms');
    expect(formatMetric('latency_ms', 33.333)).toBe('33.3 ms');
    expect(formatMetric('fps', 30)).toBe('30 fps');
    expect(formatMetric('mean_power_w', 3.456)).toBe('3.46 W');
    expect(formatMetric('frames', 1200)).toBe('1,200');
    expect(formatMetric('model_bytes', 1536)).toBe('1.5 KiB');
    expect(formatMetric('fps', null)).toBe('—');
    expect(formatMetric('fps', Number.NaN)).toBe('—');
  });

  it('labels names for people, with the unit in a title', () => {
    expect(metricLabel('run_ms')).toBe('Run time');
    expect(metricLabel('latency_ms_p95')).toBe('Latency p95');
    expect(metricLabel('queue_wait_ms')).toBe('Queue wait');
    expect(metricLabel('top1_accuracy')).toBe('Top1 accuracy');
    expect(metricTitle('run_ms')).toBe('Run time (ms)');
    expect(metricTitle('frames')).toBe('Frames');
  });

  it('signs a relative change', () => {
    expect(formatChangePercent(3.14)).toBe('+3.1 %');
    expect(formatChangePercent(-0.44)).toBe('−0.4 %');
    expect(formatChangePercent(0)).toBe('±0.0 %');
    expect(formatChangePercent(-12.6)).toBe('−13 %');
  });
});
