import { type GateReport, VERDICT_MARK, boardName, changeText, intervalText, isRunFailure, regressed, reportBoards, valueText } from './comparison.ts';

/** A table cell: no pipe, newline or tag can break the table out of its row. */
export function mdCell(text: string): string {
  return text.replace(/\r?\n|\r/g, ' ').replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').trim() || ' ';
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** The gate's outcome in one line: what CI shows first. */
export function headline(report: GateReport): string {
  const failed = report.runs.filter(isRunFailure).length;
  const verdict = report.comparison?.verdict;
  const mark = failed || regressed(report) ? '❌' : verdict ? VERDICT_MARK[verdict] : '❔';
  const outcome = [
    failed ? `${failed} of ${report.runs.length} run(s) failed` : null,
    verdict ? verdict : 'no comparison (no run succeeded)',
  ]
    .filter(Boolean)
    .join(', ');
  return `${mark} ${outcome}`;
}

/**
 * The Markdown summary of one gated `mm run` (made for `$GITHUB_STEP_SUMMARY`): a heading with
 * the outcome, a table of boards × metrics (each cell the verdict, baseline → current median
 * and the change), the overall verdict per metric, the context fields that differ from the
 * baseline's runs, and the runs that failed.
 */
export function summaryMarkdown(report: GateReport): string {
  const out: string[] = [];
  out.push(`### ${headline(report)}: ${mdCell(report.title)} vs baseline ${code(report.baseline)}`, '');
  const c = report.comparison;
  const boards = reportBoards(report);
  if (c && c.metrics.length) {
    const head = ['Board', 'Run', ...c.metrics.map((m) => `${code(m.metric)} ${m.better === 'higher' ? '↑' : '↓'}`)];
    out.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
    for (const id of boards) {
      const run = report.runs.find((r) => r.board_id === id);
      const cells = [mdCell(boardName(report, id)), run ? mdCell(run.status) : 'baseline only'];
      for (const m of c.metrics) {
        const b = m.boards.find((x) => x.board_id === id);
        if (!b) {
          cells.push('—');
          continue;
        }
        const ci = intervalText(b);
        cells.push(mdCell(`${VERDICT_MARK[b.verdict]} ${b.verdict}: ${changeText(m.metric, b)}${ci ? `, 95 % CI ${ci}` : ''}`));
      }
      out.push(`| ${cells.join(' | ')} |`);
    }
    out.push(`| **All boards** | ${mdCell(c.verdict)} | ${c.metrics.map((m) => `${VERDICT_MARK[m.verdict]} **${m.verdict}**`).join(' | ')} |`, '');
  } else if (c) {
    out.push('The comparison found no metric both the baseline and these runs have.', '');
  }
  // The thresholds the server judged by, where it says; else what was asked for and its default.
  const judged = (c?.metrics ?? []).filter((m) => m.threshold_pct !== undefined);
  const thresholds = judged.length ? judged.map((m) => `${code(m.metric)} ${m.threshold_pct} %`).join(', ') : `${Object.entries(report.thresholds).map(([k, v]) => `${code(k)} ${v} %, `).join('')}otherwise 3 %`;
  out.push(
    `Verdicts: ${Object.entries(VERDICT_MARK).map(([v, m]) => `${m} ${v}`).join(' · ')}. A metric regresses when it does on two boards (or on the only one); ` +
      `threshold ${thresholds}.`,
    '',
  );
  if (c?.skipped_metrics?.length) out.push(`Not compared (which way is better is not known from the name): ${c.skipped_metrics.map(code).join(', ')}.`, '');
  const differs = Object.entries(c?.differs ?? {});
  if (differs.length) {
    out.push('**Differs from the baseline** (a change may come from these):', '', '| Field | Baseline | This run |', '|---|---|---|');
    for (const [field, [was, is]] of differs) out.push(`| ${code(field)} | ${mdCell(valueText(was))} | ${mdCell(valueText(is))} |`);
    out.push('');
  }
  const failed = report.runs.filter(isRunFailure);
  if (failed.length) {
    out.push('**Runs that did not succeed:**', '');
    for (const r of failed) out.push(`- ${mdCell(r.board_name)}${r.operation_id !== null ? ` (operation ${r.operation_id})` : ''}: ${mdCell(r.status)}${r.error ? ` — ${mdCell(r.error)}` : ''}`);
    out.push('');
  }
  if (report.link) out.push(`[See it on the dashboard](${report.link})`, '');
  return `${out.join('\n')}\n`;
}
