import { describe, expect, it } from 'vitest';
import type { Board } from '@mm/api-client';
import { fleetQuery, matchesFleetFilters, parseFleetFilters } from '../src/lib/fleet-filters.ts';
import { formatMetric } from '../src/lib/format.ts';
import { readRunResult } from '../src/lib/run-result.ts';

const board = (over: Partial<Board>): Board =>
  ({
    id: '00000000-0000-4000-8000-000000000001',
    name: 'kv260-lab-7',
    status: 'online',
    busy: false,
    last_seen_at: null,
    connected_at: null,
    agent_version: null,
    hostname: 'zynq-7',
    platform: null,
    boot_id: null,
    active_pac: null,
    labels: { camera: 'yes', site: 'lab-2', 'mm/arch': 'arm64' },
    ...over,
  }) as Board;

describe('the fleet view filters (URL query)', () => {
  it('round-trip through the URL, repeated labels kept, broken pairs dropped', () => {
    const f = parseFleetFilters('?label=camera%3Dyes&label=mm%2Farch%3Darm64&label=nonsense&status=online&health=bad&q=lab');
    expect(f).toEqual({ labels: [['camera', 'yes'], ['mm/arch', 'arm64']], status: 'online', health: 'bad', q: 'lab' });
    expect(parseFleetFilters(fleetQuery(f))).toEqual(f);
    expect(fleetQuery({ labels: [], status: '', health: '', q: '' })).toBe('');
  });

  it('match every label pair, the status (busy and maintenance too), the health (absent: unknown) and the name or host', () => {
    const all = (q: string, b: Board) => matchesFleetFilters(b, parseFleetFilters(q));
    expect(all('?label=camera%3Dyes&label=site%3Dlab-2', board({}))).toBe(true);
    expect(all('?label=camera%3Dyes&label=site%3Dlab-3', board({}))).toBe(false);
    expect(all('?label=camera%3D', board({}))).toBe(false);
    expect(all('?status=offline', board({}))).toBe(false);
    expect(all('?status=busy', board({ busy: true }))).toBe(true);
    expect(all('?status=maintenance', board({}))).toBe(false);
    expect(all('?status=maintenance', board({ maintenance: true }))).toBe(true);
    expect(all('?health=unknown', board({}))).toBe(true);
    expect(all('?health=good', board({}))).toBe(false);
    expect(all('?health=bad', board({ health: 'bad' }))).toBe(true);
    expect(all('?q=ZYNQ', board({}))).toBe(true);
    expect(all('?q=zcu', board({}))).toBe(false);
  });
});

describe('an operation result read for people', () => {
  it('reads files, times and metrics, leaving out what is not a finite number', () => {
    const r = readRunResult({
      files: [{ kind: 'bitstream', filename: 'design.bit', size: 2048, cached: true }, 'junk'],
      files_pulled: 0,
      files_cached: 1,
      exit_code: 0,
      duration_ms: 1500,
      output_video: 'output.mp4',
      metrics: { fps: 31.5, latency_ms: 12, label: 'x', bad: null },
      steps: [{ name: 'transfer', ms: 200 }, { name: 'oops' }],
    });
    expect(r?.files).toEqual([{ kind: 'bitstream', filename: 'design.bit', size: 2048, cached: true, bytes_pulled: null, wire_bytes: null }]);
    expect(r?.metrics).toEqual({ fps: 31.5, latency_ms: 12 });
    expect(r?.steps).toEqual([['transfer', 200]]);
    expect(r?.exitCode).toBe(0);
    expect(readRunResult(null)).toBeNull();
    expect(readRunResult([1, 2])).toBeNull();
    expect(readRunResult({})?.files).toEqual([]);
  });

  it('formats metrics with the unit their name says', () => {
    expect(formatMetric('latency_ms', 12.345)).toBe('12.3 ms');
    // One formatter for the whole dashboard (and mm): a whole number stays whole.
    expect(formatMetric('max_temperature_c', 61)).toBe('61 °C');
    expect(formatMetric('max_temperature_c', 68.24)).toBe('68.2 °C');
    expect(formatMetric('mean_power_w', 4.2)).toBe('4.20 W');
    expect(formatMetric('fps', 120)).toBe('120 fps');
    expect(formatMetric('score', 0.5)).toBe('0.50');
  });
});
