import { describe, expect, it } from 'vitest';
import { stepMeasures } from '../src/rollouts/rollout-engine.ts';
import { countSteps, isStepActive, isStepEnded } from '../src/rollouts/rollout-object.ts';

describe("a rollout step's measures", () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 27, 4, 0, 0, ms));

  it('takes run_ms and the metrics from result.metrics, keeping only finite numbers', () => {
    const m = stepMeasures({ result: { metrics: { run_ms: 812.4, fps: 29.5, note: 'x', bad: Number.NaN }, duration_ms: 2000 }, startedAt: at(0), finishedAt: at(5000) });
    expect(m).toEqual({ runMs: 812, metrics: { run_ms: 812.4, fps: 29.5 } });
  });

  it("falls back to the run's duration_ms, then to the operation's start and end", () => {
    expect(stepMeasures({ result: { duration_ms: 1500 }, startedAt: at(0), finishedAt: at(5000) })).toEqual({ runMs: 1500, metrics: null });
    expect(stepMeasures({ result: null, startedAt: at(0), finishedAt: at(250) })).toEqual({ runMs: 250, metrics: null });
    expect(stepMeasures({ result: null, startedAt: null, finishedAt: at(250) })).toEqual({ runMs: null, metrics: null });
  });

  it('counts every status, ended and active ones apart', () => {
    const counts = countSteps([{ status: 'succeeded' }, { status: 'failed' }, { status: 'skipped' }, { status: 'pending' }, { status: 'succeeded' }]);
    expect(counts).toEqual({ pending: 1, queued: 0, running: 0, succeeded: 2, failed: 1, cancelled: 0, skipped: 1 });
    expect(['succeeded', 'failed', 'cancelled', 'skipped'].every(isStepEnded)).toBe(true);
    expect(['pending', 'starting', 'queued', 'running'].some(isStepEnded)).toBe(false);
    expect(['starting', 'queued', 'running'].every(isStepActive)).toBe(true);
    expect(isStepActive('pending')).toBe(false);
  });
});
