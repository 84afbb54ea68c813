import { type GateReport, type GateRun, VERDICT_MARK, boardName, changeText, intervalText, isRunFailure, reportBoards, valueText } from './comparison.ts';

/** Text for an XML attribute or element: escaped, and without the characters XML 1.0 cannot hold. */
export function xmlText(s: string): string {
  return (
    s
      // eslint-disable-next-line no-control-regex -- these are exactly the characters XML 1.0 forbids
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

const attrs = (a: Record<string, string | number>) =>
  Object.entries(a)
    .map(([k, v]) => ` ${k}="${xmlText(String(v))}"`)
    .join('');

interface Case {
  name: string;
  classname: string;
  time: number;
  failure?: { type: string; message: string; text: string };
  error?: { type: string; message: string; text: string };
  skipped?: string;
  out?: string;
}

interface Suite {
  name: string;
  properties: Record<string, string>;
  cases: Case[];
  out?: string;
}

const seconds = (ms: number | null | undefined) => (ms ? Math.round(ms) / 1000 : 0);

function runCase(r: GateRun): Case {
  const c: Case = { name: r.board_name, classname: 'mm.run', time: seconds(r.run_ms) };
  if (isRunFailure(r)) {
    const where = r.operation_id !== null ? ` (operation ${r.operation_id})` : '';
    c.error = { type: r.status, message: `The run on ${r.board_name} ${r.status === 'cancelled' ? 'was cancelled' : r.status}${where}${r.error ? `: ${r.error}` : ''}`, text: r.error ?? r.status };
  }
  return c;
}

function suiteXml(s: Suite, indent: string): string {
  const failures = s.cases.filter((c) => c.failure).length;
  const errors = s.cases.filter((c) => c.error).length;
  const skipped = s.cases.filter((c) => c.skipped !== undefined).length;
  const time = s.cases.reduce((t, c) => t + c.time, 0);
  const lines = [`${indent}<testsuite${attrs({ name: s.name, tests: s.cases.length, failures, errors, skipped, time: time.toFixed(3) })}>`];
  const props = Object.entries(s.properties);
  if (props.length) {
    lines.push(`${indent}  <properties>`);
    for (const [name, value] of props) lines.push(`${indent}    <property${attrs({ name, value })}/>`);
    lines.push(`${indent}  </properties>`);
  }
  for (const c of s.cases) {
    const head = `${indent}  <testcase${attrs({ name: c.name, classname: c.classname, time: c.time.toFixed(3) })}`;
    const body: string[] = [];
    if (c.failure) body.push(`${indent}    <failure${attrs({ type: c.failure.type, message: c.failure.message })}>${xmlText(c.failure.text)}</failure>`);
    if (c.error) body.push(`${indent}    <error${attrs({ type: c.error.type, message: c.error.message })}>${xmlText(c.error.text)}</error>`);
    if (c.skipped !== undefined) body.push(`${indent}    <skipped${attrs({ message: c.skipped })}/>`);
    if (c.out) body.push(`${indent}    <system-out>${xmlText(c.out)}</system-out>`);
    lines.push(body.length ? `${head}>\n${body.join('\n')}\n${indent}  </testcase>` : `${head}/>`);
  }
  if (s.out) lines.push(`${indent}  <system-out>${xmlText(s.out)}</system-out>`);
  lines.push(`${indent}</testsuite>`);
  return lines.join('\n');
}

/**
 * The gated run as JUnit XML (for Jenkins' `junit`, GitLab's `artifacts:reports:junit`): a
 * `runs` testsuite with one testcase per board (an `<error>` when its run failed or was
 * cancelled), then one testsuite per metric with one testcase per board — a `<failure>` for
 * each board whose verdict is `regressed`, `<skipped>` when it is `inconclusive`. The
 * metric's own verdict (regressed only on two boards, or on the only one) is its `verdict`
 * property; what differs from the baseline's runs is the `runs` suite's system-out.
 */
export function junitXml(report: GateReport): string {
  const c = report.comparison;
  const differs = Object.entries(c?.differs ?? {}).map(([k, [a, b]]) => `${k}: ${valueText(a)} -> ${valueText(b)}`);
  const suites: Suite[] = [
    {
      name: 'runs',
      properties: { baseline: report.baseline, verdict: c?.verdict ?? 'none' },
      cases: report.runs.map(runCase),
      out: differs.length ? `Differs from the baseline:\n${differs.join('\n')}` : undefined,
    },
  ];
  const order = reportBoards(report);
  for (const m of c?.metrics ?? []) {
    const threshold = report.thresholds[m.metric];
    const boards = [...m.boards].sort((a, b) => order.indexOf(a.board_id) - order.indexOf(b.board_id));
    suites.push({
      name: m.metric,
      properties: { better: m.better, verdict: m.verdict, baseline: report.baseline, ...(threshold !== undefined ? { threshold_pct: String(threshold) } : {}) },
      cases: boards.map((b) => {
        const name = boardName(report, b.board_id);
        const ci = intervalText(b);
        const figures = `${changeText(m.metric, b)}${ci ? `, 95 % CI of the change ${ci}` : ''}`;
        const text = [
          `baseline median ${b.baseline?.median ?? '—'}${b.baseline?.ci95 ? ` (95 % CI ${b.baseline.ci95[0]} – ${b.baseline.ci95[1]})` : ''}`,
          `current median ${b.current?.median ?? '—'}${b.current?.ci95 ? ` (95 % CI ${b.current.ci95[0]} – ${b.current.ci95[1]})` : ''}`,
          `change ${b.change_pct ?? '—'} %; ${m.better} is better`,
        ].join('\n');
        const tc: Case = { name, classname: `mm.${m.metric}`, time: 0, out: `${VERDICT_MARK[b.verdict]} ${b.verdict}: ${figures}` };
        if (b.verdict === 'regressed') tc.failure = { type: 'regressed', message: `${m.metric} regressed on ${name}: ${figures}`, text };
        else if (b.verdict === 'inconclusive') tc.skipped = `inconclusive: ${figures}`;
        return tc;
      }),
    });
  }
  const all = suites.flatMap((s) => s.cases);
  const total = {
    name: `mm run ${report.title} vs baseline ${report.baseline}`,
    tests: all.length,
    failures: all.filter((x) => x.failure).length,
    errors: all.filter((x) => x.error).length,
    skipped: all.filter((x) => x.skipped !== undefined).length,
    time: all.reduce((t, x) => t + x.time, 0).toFixed(3),
  };
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites${attrs(total)}>\n${suites.map((s) => suiteXml(s, '  ')).join('\n')}\n</testsuites>\n`;
}
