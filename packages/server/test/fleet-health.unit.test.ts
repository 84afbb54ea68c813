import { describe, expect, it } from 'vitest';
import { combineVerdicts, evaluateCheckRun } from '../src/fleet/health-evaluation.ts';

const succeeded = (metrics: Record<string, number>) => ({ status: 'succeeded', result: { exit_code: 0, metrics }, error: null });

describe('health-check evaluation', () => {
  it('is good when the run succeeded and every expected metric is within its bounds', () => {
    expect(evaluateCheckRun(succeeded({ fps: 30, latency_ms: 20, run_ms: 900 }), { metrics: { fps: { min: 10 }, latency_ms: { max: 50 } } })).toEqual({ health: 'good' });
    // Bounds are inclusive; no expectations at all: success is enough.
    expect(evaluateCheckRun(succeeded({ fps: 10 }), { metrics: { fps: { min: 10, max: 10 } } })).toEqual({ health: 'good' });
    expect(evaluateCheckRun(succeeded({}), {})).toEqual({ health: 'good' });
  });

  it('names each metric out of bounds, or missing', () => {
    expect(evaluateCheckRun(succeeded({ fps: 3.1, latency_ms: 80 }), { metrics: { fps: { min: 10 }, latency_ms: { max: 50 } } })).toEqual({
      health: 'bad',
      reason: 'fps 3.1 < min 10, latency_ms 80 > max 50',
    });
    expect(evaluateCheckRun(succeeded({ fps: 30 }), { metrics: { power_w: { max: 5 } } })).toEqual({ health: 'bad', reason: 'power_w missing' });
    expect(evaluateCheckRun({ status: 'succeeded', result: null, error: null }, { metrics: { fps: { min: 1 } } })).toEqual({ health: 'bad', reason: 'fps missing' });
  });

  it('is bad when the run did not succeed, with its error', () => {
    const failed = { status: 'failed', result: null, error: { code: 'runner_failed', message: 'exit 3' } };
    expect(evaluateCheckRun(failed, {})).toEqual({ health: 'bad', reason: 'run failed (runner_failed: exit 3)' });
  });

  it("combines a board's checks: any bad makes it bad with every reason, all good make it good", () => {
    expect(combineVerdicts([])).toBeUndefined();
    expect(combineVerdicts([{ check: 'a', verdict: { health: 'good' } }, { check: 'b', verdict: { health: 'good' } }])).toEqual({ health: 'good' });
    expect(
      combineVerdicts([
        { check: 'speed', verdict: { health: 'bad', reason: 'fps 3.1 < min 10' } },
        { check: 'smoke', verdict: { health: 'good' } },
        { check: 'temp', verdict: { health: 'bad', reason: 'max_temperature_c 91 > max 85' } },
      ]),
    ).toEqual({ health: 'bad', reason: 'speed: fps 3.1 < min 10; temp: max_temperature_c 91 > max 85' });
  });
});
