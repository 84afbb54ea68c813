/**
 * The CI gate's reports (issue 43, item 2) from the contract's comparison shape
 * (`POST /api/comparisons/`): the Markdown table for `$GITHUB_STEP_SUMMARY` and the JUnit XML,
 * the latter read back with a real XML parser (fast-xml-parser) the way Jenkins and GitLab read
 * it: a well-formed document, one testsuite per metric, a failing testcase per regression.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { Comparison, GateReport } from '../src/gate/comparison.ts';
import { collectDirection, collectThreshold, comparisonLink, gateWanted, intOption } from '../src/gate/gate.ts';
import { junitXml } from '../src/gate/junit-report.ts';
import { mdCell, summaryMarkdown } from '../src/gate/summary-markdown.ts';
import { EXIT, UsageError } from '../src/errors.ts';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';

/** fps regressed on both boards (so the metric and the whole comparison); latency unchanged on one, inconclusive on the other. */
const regressedComparison: Comparison = {
  verdict: 'regressed',
  metrics: [
    {
      metric: 'fps',
      better: 'higher',
      verdict: 'regressed',
      boards: [
        { board_id: A, baseline: { median: 30, ci95: [29.5, 30.4] }, current: { median: 27.1, ci95: [26.8, 27.5] }, change_pct: -9.67, ci95_pct: [-11.2, -8.1], verdict: 'regressed' },
        { board_id: B, baseline: { median: 30, ci95: [29.6, 30.3] }, current: { median: 28.5, ci95: [28.1, 28.9] }, change_pct: -5, ci95_pct: [-6.3, -3.7], verdict: 'regressed' },
      ],
    },
    {
      metric: 'latency_ms',
      better: 'lower',
      verdict: 'unchanged',
      boards: [
        { board_id: A, baseline: { median: 33.3, ci95: [33, 33.6] }, current: { median: 33.4, ci95: [33.1, 33.7] }, change_pct: 0.3, ci95_pct: [-0.9, 1.5], verdict: 'unchanged' },
        { board_id: B, baseline: { median: 33.3, ci95: [32, 34.5] }, current: { median: 34.1, ci95: [31.5, 36.9] }, change_pct: 2.4, ci95_pct: [-5.4, 10.8], verdict: 'inconclusive' },
      ],
    },
  ],
  differs: { runner_version: ['0.1.0', '0.2.0'], dpu_mhz: [300, 275] },
};

const report = (over: Partial<GateReport> = {}): GateReport => ({
  title: 'yolo (invocation 12, rollout 3)',
  baseline: 'kv260-v1',
  comparison: regressedComparison,
  runs: [
    { board_id: A, board_name: 'kv260-a', operation_id: 41, status: 'succeeded', run_ms: 1520 },
    { board_id: B, board_name: 'kv260|b <lab> & "co"', operation_id: 42, status: 'succeeded', run_ms: 1480 },
  ],
  boardNames: { [A]: 'kv260-a', [B]: 'kv260|b <lab> & "co"' },
  thresholds: {},
  ...over,
});

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase', 'property'].includes(name) });

interface JCase {
  name: string;
  classname: string;
  failure?: { type: string; message: string; '#text'?: string };
  error?: { type: string; message: string };
  skipped?: { message: string };
}
interface JSuite {
  name: string;
  tests: string;
  failures: string;
  errors: string;
  skipped: string;
  testcase: JCase[];
  properties?: { property: Array<{ name: string; value: string }> };
}

function parseJunit(xml: string) {
  expect(XMLValidator.validate(xml)).toBe(true);
  const doc = parser.parse(xml) as { testsuites: { tests: string; failures: string; errors: string; skipped: string; testsuite: JSuite[] } };
  return doc.testsuites;
}

const prop = (s: JSuite, name: string) => s.properties?.property.find((p) => p.name === name)?.value;

describe('JUnit report', () => {
  it('is well-formed XML: a runs suite, one suite per metric, a failure per regressed board, skipped when inconclusive', () => {
    const j = parseJunit(junitXml(report()));
    expect(j.testsuite.map((s) => s.name)).toEqual(['runs', 'fps', 'latency_ms']);
    const [runs, fps, latency] = j.testsuite as [JSuite, JSuite, JSuite];
    expect(runs.testcase.map((c) => c.name)).toEqual(['kv260-a', 'kv260|b <lab> & "co"']);
    expect(runs.testcase.every((c) => !c.error && !c.failure)).toBe(true);
    expect(prop(runs, 'verdict')).toBe('regressed');
    expect(prop(runs, 'baseline')).toBe('kv260-v1');

    expect(fps).toMatchObject({ tests: '2', failures: '2', errors: '0', skipped: '0' });
    expect(prop(fps, 'verdict')).toBe('regressed');
    expect(prop(fps, 'better')).toBe('higher');
    expect(fps.testcase[0]!.classname).toBe('mm.fps');
    expect(fps.testcase[0]!.failure!.type).toBe('regressed');
    expect(fps.testcase[0]!.failure!.message).toBe('fps regressed on kv260-a: 30 fps → 27.1 fps (−9.7 %), 95 % CI of the change [−11 %, −8.1 %]');
    expect(fps.testcase[1]!.name).toBe('kv260|b <lab> & "co"');

    expect(latency).toMatchObject({ tests: '2', failures: '0', skipped: '1' });
    expect(latency.testcase[0]!.failure).toBeUndefined();
    expect(latency.testcase[1]!.skipped!.message).toMatch(/^inconclusive: 33\.3 ms → 34\.1 ms \(\+2\.4 %\)/);

    expect(j).toMatchObject({ tests: '6', failures: '2', errors: '0', skipped: '1' });
  });

  it('a failed run is an <error> in the runs suite; with no run succeeded there is no metric suite', () => {
    const j = parseJunit(
      junitXml(report({ comparison: null, runs: [{ board_id: A, board_name: 'kv260-a', operation_id: 41, status: 'failed', error: 'runner_failed: exit 3 <oops>', run_ms: 900 }] })),
    );
    expect(j.testsuite).toHaveLength(1);
    const c = j.testsuite[0]!.testcase[0]!;
    expect(c.error!.type).toBe('failed');
    expect(c.error!.message).toBe('The run on kv260-a failed (operation 41): runner_failed: exit 3 <oops>');
    expect(j).toMatchObject({ tests: '1', failures: '0', errors: '1' });
  });

  it('an unchanged comparison has no failure; control characters in names do not break the XML', () => {
    const unchanged: Comparison = {
      verdict: 'unchanged',
      metrics: [{ ...regressedComparison.metrics[1]!, boards: [{ ...regressedComparison.metrics[1]!.boards[0]! }] }],
      differs: {},
    };
    const xml = junitXml(report({ comparison: unchanged, runs: [{ board_id: A, board_name: 'bell\u0007board', operation_id: 1, status: 'succeeded' }], boardNames: {} }));
    const j = parseJunit(xml);
    expect(j).toMatchObject({ failures: '0', errors: '0', tests: '2' });
    expect(j.testsuite[1]!.testcase[0]!.name).toBe('bellboard');
  });
});

describe('Markdown summary', () => {
  it('a boards × metrics table with verdicts, the overall row, what differs and the legend', () => {
    const md = summaryMarkdown(report({ thresholds: { fps: 5 } }));
    const lines = md.split('\n');
    expect(lines[0]).toBe('### ❌ regressed: yolo (invocation 12, rollout 3) vs baseline `kv260-v1`');
    const tableStart = lines.indexOf('| Board | Run | `fps` ↑ | `latency_ms` ↓ |');
    expect(tableStart).toBeGreaterThan(0);
    expect(lines[tableStart + 1]).toBe('|---|---|---|---|');
    expect(lines[tableStart + 2]).toBe('| kv260-a | succeeded | ❌ regressed: 30 fps → 27.1 fps (−9.7 %), 95 % CI [−11 %, −8.1 %] | ✅ unchanged: 33.3 ms → 33.4 ms (+0.3 %), 95 % CI [−0.9 %, +1.5 %] |');
    // A pipe in a board's name is escaped, a tag is not a tag: the row keeps its four cells.
    expect(lines[tableStart + 3]).toMatch(/^\| kv260\\\|b &lt;lab&gt; & "co" \| succeeded \| ❌ regressed: .* \| ❔ inconclusive: .* \|$/);
    expect(lines[tableStart + 3]!.split(/(?<!\\)\|/)).toHaveLength(6);
    expect(lines[tableStart + 4]).toBe('| **All boards** | regressed | ❌ **regressed** | ✅ **unchanged** |');
    expect(md).toContain('threshold `fps` 5 %, otherwise 3 %.');
    expect(md).toContain('| `runner_version` | 0.1.0 | 0.2.0 |');
    expect(md).toContain('| `dpu_mhz` | 300 | 275 |');
    expect(md).not.toContain('Runs that did not succeed');
  });

  it('failed runs are listed and lead the heading; no comparison is said so', () => {
    const md = summaryMarkdown(report({ comparison: null, runs: [{ board_id: A, board_name: 'kv260-a', operation_id: 41, status: 'cancelled', error: null }] }));
    expect(md.split('\n')[0]).toBe('### ❌ 1 of 1 run(s) failed, no comparison (no run succeeded): yolo (invocation 12, rollout 3) vs baseline `kv260-v1`');
    expect(md).toContain('- kv260-a (operation 41): cancelled');
    expect(md).not.toContain('| Board |');
  });

  it('an improvement passes with its mark; a board only the baseline has shows as such', () => {
    const improved: Comparison = {
      verdict: 'improved',
      metrics: [
        {
          metric: 'fps',
          better: 'higher',
          verdict: 'improved',
          boards: [
            { board_id: A, baseline: { median: 30, ci95: null }, current: { median: 33, ci95: null }, change_pct: 10, ci95_pct: null, verdict: 'improved' },
            { board_id: C, baseline: { median: 30, ci95: null }, current: null, change_pct: null, ci95_pct: null, verdict: 'inconclusive' },
          ],
        },
      ],
      differs: {},
    };
    const md = summaryMarkdown(report({ comparison: improved, runs: [report().runs[0]!], boardNames: { [A]: 'kv260-a', [C]: 'zu9-old' } }));
    expect(md.split('\n')[0]).toBe('### 🟢 improved: yolo (invocation 12, rollout 3) vs baseline `kv260-v1`');
    expect(md).toContain('| kv260-a | succeeded | 🟢 improved: 30 fps → 33 fps (+10 %) |');
    expect(md).toContain('| zu9-old | baseline only | ❔ inconclusive: 30 fps → — (no run) |');
  });

  it("the server's thresholds per metric and the metrics it left out are said", () => {
    const c: Comparison = {
      ...regressedComparison,
      metrics: regressedComparison.metrics.map((m) => ({ ...m, threshold_pct: m.metric === 'fps' ? 5 : 3 })),
      skipped_metrics: ['top1_accuracy'],
    };
    const md = summaryMarkdown(report({ comparison: c }));
    expect(md).toContain('threshold `fps` 5 %, `latency_ms` 3 %.');
    expect(md).toContain('Not compared (which way is better is not known from the name): `top1_accuracy`.');
  });

  it('mdCell keeps a cell one cell', () => {
    expect(mdCell('a|b\nc\\d')).toBe('a\\|b c\\\\d');
    expect(mdCell('')).toBe(' ');
  });
});

describe('the link back to the dashboard', () => {
  it("names the comparison page of the rollout or the operations, under the server's own path", () => {
    expect(comparisonLink('http://mm.lab:8000', 'release 2', { rollout_id: 7 })).toBe('http://mm.lab:8000/compare?baseline=release+2&rollout=7');
    expect(comparisonLink('https://mm.example/', 'b', { operation_ids: [3, 4] })).toBe('https://mm.example/compare?baseline=b&operations=3%2C4');
    expect(comparisonLink('https://example.org/mm', 'b', { operation_ids: [3] })).toBe('https://example.org/mm/compare?baseline=b&operations=3');
  });
});

describe('gate flags', () => {
  const none = { threshold: {} };
  it('--fail-on-regression, --summary-md, --junit and --threshold need --baseline (exit 2); --baseline cannot go with --detach', () => {
    expect(gateWanted(none, {})).toBe(false);
    expect(gateWanted({ ...none, baseline: 'b' }, {})).toBe(true);
    for (const o of [{ failOnRegression: true }, { summaryMd: 's.md' }, { junit: 'j.xml' }, { threshold: { fps: 5 } }, { direction: { top1: 'higher' as const } }]) {
      let err: unknown;
      try {
        gateWanted({ ...none, ...o }, {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).exitCode).toBe(EXIT.usage);
      expect((err as Error).message).toMatch(/give --baseline NAME/);
    }
    expect(() => gateWanted({ ...none, baseline: 'b' }, { detach: true })).toThrow(/cannot go with --detach/);
    expect(() => gateWanted({ ...none, baseline: ' ' }, {})).toThrow(/must not be empty/);
  });

  it('--threshold metric=percent and the bounded integers of --repeat / --warmup', () => {
    expect(collectThreshold('fps=5', collectThreshold('latency_ms=2.5%'))).toEqual({ latency_ms: 2.5, fps: 5 });
    for (const bad of ['fps', 'fps=0', 'fps=-1', 'FPS=3', '=3', 'fps=x']) expect(() => collectThreshold(bad)).toThrow(UsageError);
    expect(collectDirection('top1_accuracy=higher', collectDirection('boot_s=lower'))).toEqual({ boot_s: 'lower', top1_accuracy: 'higher' });
    for (const bad of ['top1', 'top1=up', 'Top1=higher']) expect(() => collectDirection(bad)).toThrow(UsageError);
    const repeat = intOption(1, 100, '--repeat');
    expect(repeat('1')).toBe(1);
    expect(repeat('100')).toBe(100);
    for (const bad of ['0', '101', '1.5', '-1', 'ten', '']) expect(() => repeat(bad)).toThrow(/--repeat takes a whole number from 1 to 100/);
  });

  it('exit 5 is the regression code', () => {
    expect(EXIT.regression).toBe(5);
  });
});
