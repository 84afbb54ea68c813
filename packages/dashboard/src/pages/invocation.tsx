import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Operation } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { lazyPage } from '../components/lazy-page.tsx';
import { RunSummary } from '../components/run-summary.tsx';
import { RunTargetPicker, runBody, selectorMatches, type RunTarget } from '../components/run-target.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { FileSlot } from '../components/file-slot.tsx';
import { Link } from '../components/link.tsx';
import { OperationLive } from '../components/operation-live.tsx';
import { ConfirmButton } from '../components/confirm.tsx';
import { OperationsTable } from '../components/operations-table.tsx';
import { RunOnBoards } from '../components/run-on-boards.tsx';
import { RunnerParameters } from '../components/runner-parameters.tsx';
import { formatBytes, formatTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import { canOperate } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';

const INPUT_KINDS = ['parameter', 'bitstream', 'weights', 'input_video'] as const;

// uPlot is in this chunk only: the first page's bundle stays small.
const MetricPlots = lazyPage(() => import('../components/metric-plots.tsx').then((m) => m.MetricPlots));

export function InvocationPage({ id }: { id: number }) {
  const [actionError, setActionError] = useState<unknown>(null);
  const [live, setLive] = useState<Operation | null>(null);
  const [target, setTarget] = useState<RunTarget>({ mode: 'board', boardId: '' });
  const [uploading, setUploading] = useState<ReadonlySet<string>>(new Set());
  const [writingParameters, setWritingParameters] = useState(false);
  const { boards } = useBoards(5000);

  const details = useResource(() => unwrap(client.GET('/api/invocations/{id}/', { params: { path: { id } } })), [id]);
  const { data: inv, error } = details;
  const reload = details.reload;
  useEffect(() => setLive(null), [id]);
  // An operation under way (started here, elsewhere, or before a reload) is followed live.
  useEffect(() => {
    const running = inv?.operations.find((o) => o.status === 'queued' || o.status === 'running');
    if (running) setLive((l) => l ?? running);
  }, [inv]);

  useEffect(() => {
    if (boards?.length === 1 && target.mode === 'board' && !target.boardId) setTarget({ mode: 'board', boardId: boards[0]!.id });
  }, [boards]);

  async function start(kind: 'transfer' | 'execute') {
    setActionError(null);
    try {
      // Answer at once (202) and follow the operation's events rather than hold the request.
      const op =
        target.mode === 'selector'
          ? await unwrap(client.POST('/api/invocations/{id}/execute/', { params: { path: { id }, header: { prefer: 'respond-async' } }, body: runBody(target) }))
          : await unwrap(
              client.POST(kind === 'execute' ? '/api/invocations/{id}/execute/' : '/api/invocations/{id}/transfer/', {
                params: { path: { id }, header: { prefer: 'respond-async' } },
                body: target.boardId ? { board_id: target.boardId } : {},
              }),
            );
      setLive(op);
      reload();
    } catch (err) {
      setActionError(err);
    }
  }

  if (error && !inv) return <ErrorBox error={error} />;
  if (!inv) return <p aria-busy="true">Loading…</p>;
  const out = inv.files.output_video;
  const active = live && (live.status === 'queued' || live.status === 'running');
  const board = target.mode === 'board' ? boards?.find((b) => b.id === target.boardId) : undefined;
  const noMatch = target.mode === 'selector' && !!boards && !boards.some((b) => selectorMatches(b.labels, target.selector));
  const latestRun = inv.operations.find((o) => o.kind === 'execute') ?? null;
  // mm-runner's per-frame results of the latest run that left them (docs/runner.md).
  const latestResults = resultsOf(inv.operations);
  // Why a run cannot start now, if it cannot (the buttons are disabled and this says why).
  const blocked = active
    ? 'An operation of this invocation is under way.'
    : uploading.size > 0
      ? 'Wait for the upload to finish.'
      : board && board.status !== 'online'
        ? `The board ${board.name} is ${board.status}: start its agent, then try again.`
        : noMatch
          ? 'No registered board carries these labels.'
          : '';
  return (
    <section aria-labelledby="inv-name" class="stack">
      <p>
        <Link href="/invocations">← Invocations</Link>
      </p>
      <div class="page-head">
        <h1 id="inv-name">
          {inv.name} <span class="muted">#{inv.id}</span>
        </h1>
        <div class="row">
          <a class="button" href={`/api/invocations/${inv.id}/download/`} download>
            Download ZIP
          </a>
          {canOperate.value && <DeleteInvocation id={inv.id} name={inv.name} />}
        </div>
      </div>
      {inv.description && <p>{inv.description}</p>}
      <p class="muted small">
        Created {formatTime(inv.created_at)} · updated {formatTime(inv.updated_at)}
      </p>

      <h2>Files</h2>
      <div class="grid slots">
        {INPUT_KINDS.map((k) => (
          <FileSlot
            key={k}
            invocationId={inv.id}
            kind={k}
            file={inv.files[k]}
            editable={canOperate.value}
            onChanged={() => reload()}
            {...(k === 'parameter'
              ? {
                  extra: (
                    <button type="button" class="link small" aria-expanded={writingParameters} aria-controls="runner-parameters" onClick={() => setWritingParameters((w) => !w)}>
                      Write mm-runner parameters…
                    </button>
                  ),
                }
              : {})}
            onBusy={(busy) =>
              setUploading((set) => {
                const next = new Set(set);
                if (busy) next.add(k);
                else next.delete(k);
                return next;
              })
            }
          />
        ))}
      </div>
      {writingParameters && canOperate.value && (
        <div id="runner-parameters">
          <RunnerParameters
            invocationId={inv.id}
            current={inv.files.parameter}
            onUploaded={() => {
              setWritingParameters(false);
              reload();
            }}
            onClose={() => setWritingParameters(false)}
          />
        </div>
      )}

      <h2>Latest run</h2>
      <RunSummary run={latestRun} boards={boards} />

      <h2>Run on a board</h2>
      {/* Room for more ways to start runs (e.g. across many boards) as their own components, next to this card. */}
      {canOperate.value ? (
        <div class="card stack">
          {boards && boards.length === 0 && <p>No board is registered yet. Register one on the <Link href="/boards">Boards</Link> page.</p>}
          {boards && boards.length > 0 && (
            <div class="row wrap">
              <RunTargetPicker boards={boards} value={target} onChange={setTarget} />
              {/* Files go to one named board: a selector run copies them when it starts. */}
              {target.mode === 'board' && (
                <button type="button" onClick={() => void start('transfer')} disabled={!!blocked} aria-describedby="run-blocked">
                  Transfer files
                </button>
              )}
              <button type="button" class="primary" onClick={() => void start('execute')} disabled={!!blocked} aria-describedby="run-blocked">
                Execute
              </button>
            </div>
          )}
          <RunOnBoards kind="execute" invocationId={inv.id} />
          <p id="run-blocked" class="small muted" data-testid="run-blocked">
            {blocked}
          </p>
          <ErrorBox error={actionError} onDismiss={() => setActionError(null)} />
        </div>
      ) : (
        <p class="muted">Your role (viewer) can watch runs but not start them.</p>
      )}
      {live && (
        <OperationLive
          key={live.id}
          operation={live}
          onEnd={(op) => {
            setLive(op);
            reload();
          }}
        />
      )}

      <h2>Output video</h2>
      {out ? (
        <div class="stack">
          {/* The server honours Range: the player seeks without downloading the whole file. */}
          <video controls preload="metadata" src={`/api/invocations/${inv.id}/video/`} data-testid="output-video" aria-label={`Output video of ${inv.name}`}>
            Your browser cannot play this video: <a href={`/api/invocations/${inv.id}/video/`}>download it</a>.
          </video>
          <p class="small muted">
            {out.filename} · {formatBytes(out.size)} · <a href={`/api/invocations/${inv.id}/video/`} download={out.filename}>download</a>
            {latestResults && (
              <>
                {' '}
                · <a href={latestResults.url} download={`results-${latestResults.operation}.jsonl`} data-testid="results-link">results.jsonl</a> ({formatBytes(latestResults.size)}, one line a frame)
              </>
            )}
          </p>
        </div>
      ) : (
        <p class="muted">No output yet: execute the invocation on a board.</p>
      )}

      <h2>Metrics over its runs</h2>
      <MetricPlots invocationId={inv.id} operations={inv.operations} boards={boards} />

      <h2>Operations</h2>
      {inv.operations.length === 0 ? <p class="muted">None yet.</p> : <OperationsTable operations={inv.operations} boards={boards} />}
    </section>
  );
}

function DeleteInvocation({ id, name }: { id: number; name: string }) {
  return (
    <ConfirmButton
      label="Delete"
      question={`Delete “${name}” and its files? Running operations are cancelled.`}
      yes="Yes, delete"
      action={async () => {
        await unwrap(client.DELETE('/api/invocations/{id}/', { params: { path: { id } } }));
        navigate('/invocations');
      }}
    />
  );
}

/** The newest run's results.jsonl record (`result.results`), if a run left one. */
function resultsOf(operations: readonly Operation[]): { url: string; size: number; operation: number } | undefined {
  for (const op of operations) {
    const r = (op.result as { results?: { url?: unknown; size?: unknown } | null } | null | undefined)?.results;
    if (op.kind === 'execute' && r && typeof r.url === 'string' && typeof r.size === 'number') return { url: r.url, size: r.size, operation: op.id };
  }
  return undefined;
}
