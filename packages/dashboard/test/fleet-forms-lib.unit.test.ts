import { describe, expect, it } from 'vitest';
import type { Board, Operation } from '@mm/api-client';
import { beforeChange, expectText, intervalText, newCheckHref, runVerdict, type HealthCheck } from '../src/lib/health-verdict.ts';
import { checkSelector, replacePair } from '../src/lib/selector-check.ts';

const board = (name: string, labels: Record<string, string>): Board => ({ id: `id-${name}`, name, labels }) as unknown as Board;
const run = (over: Partial<Operation>): Operation =>
  ({ id: 1, status: 'succeeded', created_at: '2026-11-28T08:00:00.000Z', result: { metrics: { fps: 30, latency_ms: 33.3 } }, error: null, ...over }) as unknown as Operation;
const check = (over: Partial<HealthCheck> = {}): HealthCheck =>
  ({ id: 1, name: 'smoke', invocation_id: 2, board_selector: {}, interval_s: 3600, expect: { metrics: { fps: { min: 10 } } }, created_at: '2026-11-28T07:00:00.000Z', updated_at: '2026-11-28T07:00:00.000Z', ...over }) as HealthCheck;

describe('a label selector checked against the fleet before anything is sent', () => {
  const fleet = [board('a', { site: 'lab-1', camera: 'yes' }), board('b', { site: 'lab-2' }), board('c', { 'mm/arch': 'arm64' })];

  it('names the boards that match, and none for a pair no board holds, with the nearest pair (a typo of the key or the value)', () => {
    expect(checkSelector({ site: 'lab-1' }, fleet).matching.map((b) => b.name)).toEqual(['a']);
    expect(checkSelector({}, fleet).matching).toHaveLength(3);
    expect(checkSelector({ sit: 'lab-1' }, fleet)).toEqual({ matching: [], unheld: [{ wanted: 'sit=lab-1', key: 'sit', nearest: 'site=lab-1' }] });
    expect(checkSelector({ site: 'lab-9' }, fleet).unheld[0]!.nearest).toMatch(/^site=lab-[12]$/);
    expect(checkSelector({ colour: 'purple' }, fleet).unheld).toEqual([{ wanted: 'colour=purple', key: 'colour', nearest: undefined }]);
  });

  it('a combination no board holds, each pair held by some board: no pair to correct', () => {
    expect(checkSelector({ site: 'lab-2', camera: 'yes' }, fleet)).toEqual({ matching: [], unheld: [] });
  });

  it('takes a suggestion in place of the pair it corrects, the other pairs kept', () => {
    expect(replacePair({ sit: 'lab-1', camera: 'yes' }, 'sit', 'site=lab-1')).toEqual({ camera: 'yes', site: 'lab-1' });
    expect(replacePair({ 'mm/arch': 'arm46' }, 'mm/arch', 'mm/arch=arm64')).toEqual({ 'mm/arch': 'arm64' });
  });
});

describe('a health check run as the dashboard shows it', () => {
  it('passes when it succeeded within every bound, fails with the reason the server gives otherwise', () => {
    expect(runVerdict(run({}), check().expect)).toEqual({ pass: true, reason: '' });
    expect(runVerdict(run({}), { metrics: { fps: { min: 1000 }, latency_ms: { max: 10 } } })).toEqual({ pass: false, reason: 'fps 30 < min 1000, latency_ms 33.3 > max 10' });
    expect(runVerdict(run({ result: {} }), check().expect)).toEqual({ pass: false, reason: 'fps missing' });
    expect(runVerdict(run({ status: 'failed', error: { code: 'runner_failed', message: 'exit 3' } }), {})).toEqual({ pass: false, reason: 'runner_failed: exit 3' });
    expect(runVerdict(run({ status: 'running' }), {})).toBeNull();
    expect(runVerdict(run({ status: 'succeeded' }), {})).toEqual({ pass: true, reason: '' });
  });

  it('knows a run from before the check last changed', () => {
    expect(beforeChange(run({ created_at: '2026-11-28T06:59:59.000Z' }), check())).toBe(true);
    expect(beforeChange(run({}), check())).toBe(false);
  });

  it('says what passes, how often, and links a new check for a board’s labels', () => {
    expect(expectText({ metrics: { fps: { min: 10 }, latency_ms: { max: 150 } } })).toBe('fps ≥ 10, latency_ms ≤ 150');
    expect(expectText({})).toBe('the run succeeds');
    expect([60, 90, 3600, 5400, 86_400, 7 * 86_400].map(intervalText)).toEqual(['1 min', '90 s', '1 h', '1 h 30 min', '1 d', '7 d']);
    expect(newCheckHref({ site: 'lab-1', camera: 'yes' })).toBe('/health-checks?new=1&label=camera%3Dyes&label=site%3Dlab-1');
    expect(newCheckHref({})).toBe('/health-checks?new=1');
  });
});
