/**
 * Are verdicts quiet on noise and loud on a real change? (issue 42; run by hand, prints figures)
 *
 *   npx tsx bench/results-noise.ts [--comparisons 200] [--boards 4] [--repeat 10] [--noise 0.02] [--drop 0.03] [--seed 1]
 *
 * In process: the simulated runner's own noise model (packages/agent/src/simulate/simulated-metrics.ts,
 * the `sim/noise` label: each run's fps = 30 × speed × (1 + noise × Z)) feeds the server's own
 * statistics and verdict rules (packages/server/src/results/). For each comparison, every board
 * gets `--repeat` baseline runs and `--repeat` new runs:
 *   - A/A: both at sim/speed 1 → a `regressed` overall verdict (fps and latency_ms) is a false regression;
 *   - a true drop: the new runs at sim/speed 1 − drop → `regressed` is a detection.
 * The overall rule is the API's: a metric regressed on at least two boards (or the only one).
 * The real end-to-end counterpart (agents, runner processes, the HTTP API) is
 * test/e2e/results-baselines.test.ts; at 10 repeats a real comparison costs ~20 runner processes
 * per board, so 200 of them are measured here in process instead.
 */
import { parseArgs } from 'node:util';
import { simulatedMetrics } from '../packages/agent/src/simulate/simulated-metrics.ts';
import { compareSamples, metricVerdict, overallVerdict, type Verdict } from '../packages/server/src/results/verdicts.ts';

const { values } = parseArgs({
  options: {
    comparisons: { type: 'string', default: '200' },
    boards: { type: 'string', default: '4' },
    repeat: { type: 'string', default: '10' },
    noise: { type: 'string', default: '0.02' },
    drop: { type: 'string', default: '0.03' },
    seed: { type: 'string', default: '1' },
  },
});
const comparisons = Number(values.comparisons);
const boards = Number(values.boards);
const repeat = Number(values.repeat);
const noise = Number(values.noise);
const drop = Number(values.drop);

// mulberry32: a seeded generator, so a figure can be reproduced.
let state = Number(values.seed) >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297;
};

const runs = (speed: number) => Array.from({ length: repeat }, () => simulatedMetrics(speed, noise, random));

function comparison(currentSpeed: number): { overall: Verdict; fpsBoards: Verdict[] } {
  const perMetric: Record<'fps' | 'latency_ms', Verdict[]> = { fps: [], latency_ms: [] };
  for (let b = 0; b < boards; b++) {
    const base = runs(1);
    const cur = runs(currentSpeed);
    perMetric.fps.push(compareSamples(base.map((r) => r.fps), cur.map((r) => r.fps), 'higher', 3).verdict);
    perMetric.latency_ms.push(compareSamples(base.map((r) => r.latency_ms), cur.map((r) => r.latency_ms), 'lower', 3).verdict);
  }
  return { overall: overallVerdict([metricVerdict(perMetric.fps), metricVerdict(perMetric.latency_ms)]), fpsBoards: perMetric.fps };
}

function series(label: string, speed: number) {
  const started = performance.now();
  const counts: Record<Verdict, number> = { regressed: 0, improved: 0, unchanged: 0, inconclusive: 0 };
  let boardRegressed = 0;
  for (let i = 0; i < comparisons; i++) {
    const c = comparison(speed);
    counts[c.overall]++;
    boardRegressed += c.fpsBoards.filter((v) => v === 'regressed').length;
  }
  const pct = (n: number, of = comparisons) => `${((100 * n) / of).toFixed(1)} %`;
  console.log(
    `${label}: ${comparisons} comparisons × ${boards} boards × ${repeat}+${repeat} runs at sim/noise ${noise}: ` +
      `regressed ${counts.regressed} (${pct(counts.regressed)}), improved ${counts.improved}, unchanged ${counts.unchanged}, inconclusive ${counts.inconclusive}; ` +
      `fps regressed on single boards ${pct(boardRegressed, comparisons * boards)} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  return counts.regressed / comparisons;
}

const falseRate = series('A/A', 1);
const detection = series(`fps −${(drop * 100).toFixed(1)} % (sim/speed ${1 - drop})`, 1 - drop);
console.log(`false regressions ${(falseRate * 100).toFixed(1)} % (goal ≤ 1 %); detected drops ${(detection * 100).toFixed(1)} % (goal ≥ 95 %)`);
