import { useState } from 'preact/hooks';
import type { Board, Operation } from '../api/client.ts';
import { formatBytes, formatMetric, metricLabel } from '../lib/format.ts';
import { readRunResult, type RunResult } from '../lib/run-result.ts';
import { runDuration } from '../lib/run-result.ts';
import { DataTable } from './table-box.tsx';

function ms(n: number): string {
  return n < 1000 ? `${Math.round(n)} ms` : n < 60_000 ? `${(n / 1000).toFixed(1)} s` : runDuration({ started_at: new Date(0).toISOString(), finished_at: new Date(n).toISOString() });
}

/**
 * Where the time went: the wait for a board, copying the inputs, the runner itself (from the
 * operation's times and its result), or the server's own step times where it reports them.
 */
export function stepTimes(op: Operation, r: RunResult | null): Array<[string, number]> {
  if (r && r.steps.length) return r.steps;
  const t = (iso: string | null) => (iso ? new Date(iso).getTime() : NaN);
  const steps: Array<[string, number]> = [];
  const waited = t(op.started_at) - t(op.created_at);
  if (waited >= 0) steps.push(['waiting for the board', waited]);
  const ran = t(op.finished_at) - t(op.started_at);
  const runner = r?.durationMs ?? r?.metrics.run_ms ?? null;
  if (ran >= 0 && runner !== null && runner <= ran) {
    steps.push(['copying inputs and preparing', ran - runner]);
    steps.push(['runner', runner]);
  } else if (ran >= 0) steps.push([op.kind, ran]);
  return steps;
}

function StepTimes({ steps }: { steps: Array<[string, number]> }) {
  const max = Math.max(1, ...steps.map(([, v]) => v));
  return (
    // Named by the "Step times" heading above it (a caption too read the name twice).
    <table class="steps-table" data-testid="step-times" aria-labelledby="step-times-title">
      <tbody>
        {steps.map(([name, v]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td class="nowrap">{ms(v)}</td>
            <td style={{ width: '50%' }}>
              <span class="step-bar" style={{ width: `${Math.max(1, (100 * v) / max)}%` }} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** An operation's result as readable fields (files, durations, metrics), with the raw JSON a toggle away. */
export function OperationResult({ op }: { op: Operation; boards?: Board[] | null }) {
  const [raw, setRaw] = useState(false);
  const r = readRunResult(op.result);
  const steps = stepTimes(op, r);
  const hasResult = op.result !== null && op.result !== undefined;
  return (
    <div class="stack" data-testid="operation-result">
      {steps.length > 0 && (
        <>
          <h2 id="step-times-title">Step times</h2>
          <StepTimes steps={steps} />
        </>
      )}
      {r && (
        <>
          <h2>Result</h2>
          <dl class="facts">
            {r.exitCode !== null && (
              <>
                <dt>Exit status</dt>
                <dd>{r.exitCode}</dd>
              </>
            )}
            {r.durationMs !== null && (
              <>
                <dt>Runner time</dt>
                <dd>{ms(r.durationMs)}</dd>
              </>
            )}
            {r.outputVideo && (
              <>
                <dt>Output video</dt>
                <dd>
                  {r.outputVideo}
                  {op.invocation_id && (
                    <>
                      {' '}
                      · <a href={`/api/invocations/${op.invocation_id}/video/`}>watch or download</a>
                    </>
                  )}
                </dd>
              </>
            )}
            {(r.filesPulled !== null || r.filesCached !== null) && (
              <>
                <dt>Input files</dt>
                <dd>
                  {r.filesPulled ?? 0} copied ({formatBytes(r.bytesPulled ?? 0)}
                  {r.wireBytes !== null && r.bytesPulled !== null && r.wireBytes < r.bytesPulled ? `, ${formatBytes(r.wireBytes)} on the wire` : ''}), {r.filesCached ?? 0} already on the board
                </dd>
              </>
            )}
            {r.invocationDir && (
              <>
                <dt>Folder on the board</dt>
                <dd>
                  <code>{r.invocationDir}</code>
                </dd>
              </>
            )}
          </dl>
          {Object.keys(r.metrics).length > 0 && (
            <>
              <h3>Metrics</h3>
              <dl class="metric-list" data-testid="result-metrics">
                {Object.entries(r.metrics).map(([k, v]) => (
                  <div key={k}>
                    <dt title={k}>{metricLabel(k)}</dt>
                    <dd>{formatMetric(k, v)}</dd>
                  </div>
                ))}
              </dl>
            </>
          )}
          {r.files.length > 0 && (
            <DataTable label="Input files" columns={['Kind', 'File', 'Size', 'Copied', 'On the wire']}>
              {r.files.map((f) => (
                <tr key={f.kind + f.filename}>
                  <td>{f.kind}</td>
                  <td>{f.filename}</td>
                  <td>{formatBytes(f.size)}</td>
                  <td>{f.cached ? 'already on the board' : formatBytes(f.bytes_pulled)}</td>
                  <td>{f.cached ? '—' : formatBytes(f.wire_bytes)}</td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      )}
      {hasResult && (
        <div>
          <button type="button" class="link" aria-expanded={raw} onClick={() => setRaw(!raw)}>
            {raw ? 'Hide the raw result' : 'Show the raw result (JSON)'}
          </button>
          {raw && <pre class="raw-json" data-testid="raw-result">{JSON.stringify(op.result, null, 2)}</pre>}
        </div>
      )}
    </div>
  );
}
