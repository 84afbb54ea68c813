import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { FileKind, FileRecord } from '../api/client.ts';
import { client, unwrap } from '../api/client.ts';
import { formatBytes, formatDuration } from '../lib/format.ts';
import type { UploadHandle } from '../lib/upload.ts';
import { ApiProblem } from '../api/problem.ts';
import { maxUploadBytes } from '../lib/server-limits.ts';
import { ConfirmButton } from './confirm.tsx';
import { ErrorBox } from './error-box.tsx';

const LABELS: Record<FileKind, string> = {
  parameter: 'Parameter file',
  bitstream: 'Bitstream',
  weights: 'Model weights',
  input_video: 'Input video',
};

/**
 * What each slot's file picker offers (`accept`): a hint for the picker only; the server checks
 * the bytes (an input video that is no video container is 400 `invalid_video`).
 */
const ACCEPT: Record<FileKind, string> = {
  parameter: '.json,.yaml,.yml,.txt,.cfg,.ini,application/json',
  bitstream: '.bit,.bin,.xclbin,.dtbo,.pdi',
  weights: '.xmodel,.bin,.onnx,.pt,.pth,.h5,.tflite,.pb',
  input_video: 'video/*,.mp4,.m4v,.mov,.mkv,.webm,.avi,.ts,.mpg,.mpeg,.flv,.wmv,.ogv,.y4m,.h264,.264,.h265,.265',
};

/** One of the four input slots: drop or pick a file; upload with progress, speed and time left. */
export function FileSlot({
  invocationId,
  kind,
  file,
  editable,
  onChanged,
  onBusy,
  extra,
}: {
  invocationId: number;
  kind: FileKind;
  file: FileRecord | null;
  editable: boolean;
  onChanged: () => void;
  /** An upload into this slot started (true) or ended (false). */
  onBusy?: (busy: boolean) => void;
  /** More for an editor, under the buttons (the parameter slot's "Write mm-runner parameters…"). */
  extra?: ComponentChildren;
}) {
  const [upload, setUpload] = useState<UploadHandle | null>(null);
  const [over, setOver] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const input = useRef<HTMLInputElement>(null);
  /** The file being sent: Resume sends it again (the upload continues where it paused). */
  const picked = useRef<File | null>(null);
  const st = upload?.state.value;

  useEffect(() => () => upload?.cancel(), [upload]);

  async function begin(f: File | undefined) {
    if (!f) return;
    setError(null);
    // Refused before hashing (which takes a while for a big file) when the server would refuse it anyway.
    const max = await maxUploadBytes();
    if (max !== undefined && f.size > max) {
      setUpload(null);
      // Sizes that round alike (4.0 MB and 4.0 MB) are said to the byte.
      const [size, limit] = formatBytes(f.size) === formatBytes(max) ? [`${f.size.toLocaleString()} bytes`, `${max.toLocaleString()} bytes (${formatBytes(max)})`] : [formatBytes(f.size), formatBytes(max)];
      setError(new ApiProblem(413, 'payload_too_large', 'Payload Too Large', `${f.name} is ${size}: the server accepts files up to ${limit}.`));
      return;
    }
    picked.current = f;
    // Loaded on first use: the hasher and tus client stay out of the first page's bundle.
    const { startUpload } = await import('../lib/upload.ts');
    const h = startUpload(invocationId, kind, f);
    setUpload(h);
    void h.done.then(() => {
      if (h.state.value.phase === 'done') onChanged();
    });
  }

  const busy = !!st && (st.phase === 'hashing' || st.phase === 'checking' || st.phase === 'uploading');
  const onBusyRef = useRef(onBusy);
  onBusyRef.current = onBusy;
  useEffect(() => onBusyRef.current?.(busy), [busy]);
  const id = `slot-${kind}`;
  return (
    <div
      class={`slot card${over ? ' over' : ''}`}
      data-testid={id}
      onDragOver={(e) => {
        if (!editable) return;
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        if (editable && !busy) void begin(e.dataTransfer?.files[0]);
      }}
    >
      <h3 id={`${id}-title`}>{LABELS[kind]}</h3>
      {file ? (
        <p>
          <a href={file.url} download={file.filename}>
            {file.filename}
          </a>{' '}
          <span class="muted">{formatBytes(file.size)}</span>
          <br />
          <code class="small" title="sha256">
            {file.sha256.slice(0, 16)}…
          </code>
          {file.model && <ModelLine model={file.model} />}
        </p>
      ) : (
        <p class="muted">No file</p>
      )}
      {st && st.phase !== 'done' && (
        <div class="stack small" aria-live="polite">
          <div>
            {st.phase === 'hashing' && `Computing the checksum of ${st.filename}…`}
            {st.phase === 'checking' && 'Checking whether the server already has it…'}
            {st.phase === 'uploading' &&
              `Uploading ${st.filename}${st.resumedFrom ? ` (resumed at ${formatBytes(st.resumedFrom)})` : ''}`}
            {st.phase === 'paused' && `Upload of ${st.filename} paused at ${formatBytes(st.bytesDone)} of ${formatBytes(st.size)}: Resume continues it.`}
            {st.phase === 'failed' && `Upload of ${st.filename} failed.`}
          </div>
          {(st.phase === 'hashing' || st.phase === 'uploading') && (
            <progress
              max={st.size || 1}
              value={st.bytesDone}
              aria-label={`${LABELS[kind]} ${st.phase === 'hashing' ? 'checksum' : 'upload'} progress`}
            />
          )}
          {st.phase === 'uploading' && (
            <div data-testid={`${id}-progress`}>
              {formatBytes(st.bytesDone)} of {formatBytes(st.size)} · {formatBytes(st.speed)}/s · {formatDuration(st.eta)} left
            </div>
          )}
          {st.phase === 'failed' && <ErrorBox error={st.error} />}
        </div>
      )}
      {st?.phase === 'done' && (
        <p class="small ok" aria-live="polite">
          {st.deduplicated
            ? 'The server already had this file: attached without sending it.'
            : `Uploaded${st.resumedFrom ? ` (resumed at ${formatBytes(st.resumedFrom)})` : ''}.`}
        </p>
      )}
      <ErrorBox error={error} />
      {editable && (
        <div class="row wrap">
          <input
            ref={input}
            id={`${id}-input`}
            type="file"
            accept={ACCEPT[kind]}
            class="visually-hidden"
            tabIndex={-1}
            aria-label={`${LABELS[kind]}: file to upload`}
            onChange={(e) => {
              void begin((e.target as HTMLInputElement).files?.[0]);
              (e.target as HTMLInputElement).value = '';
            }}
          />
          {busy ? (
            <button type="button" onClick={() => upload?.cancel()}>
              Pause upload
            </button>
          ) : st?.phase === 'paused' && picked.current ? (
            <button type="button" class="primary" onClick={() => void begin(picked.current ?? undefined)}>
              Resume upload
            </button>
          ) : (
            <button type="button" onClick={() => input.current?.click()} aria-describedby={`${id}-title`}>
              {file ? 'Replace…' : 'Choose file…'}
            </button>
          )}
          {file && !busy && (
            <ConfirmButton
              label={
                <>
                  Remove <span class="visually-hidden">{LABELS[kind]}</span>
                </>
              }
              question={`Remove ${file.filename} from this invocation?`}
              yes="Yes, remove"
              action={async () => {
                await unwrap(client.DELETE('/api/invocations/{id}/files/{kind}/', { params: { path: { id: invocationId, kind } } }));
                setUpload(null);
                onChanged();
              }}
            />
          )}
          <span class="muted small">or drop a file here</span>
        </div>
      )}
      {editable && extra}
    </div>
  );
}

/** What the server read of an `.xmodel` (docs/accelerators.md): the DPUs it was compiled for and its inputs. */
function ModelLine({ model }: { model: NonNullable<NonNullable<FileRecord>['model']> }) {
  const fingerprints = [...new Set(model.dpu_subgraphs.map((s) => s.dpu_fingerprint).filter((f): f is string => !!f))];
  return (
    <span class="small muted" data-testid="xmodel-summary">
      <br />
      {fingerprints.length ? `DPU ${fingerprints.join(', ')} (${model.dpu_subgraphs.length} DPU subgraph${model.dpu_subgraphs.length === 1 ? '' : 's'})` : 'CPU only (no DPU subgraph)'}
      {model.inputs.length > 0 && ` · input ${model.inputs.map((i) => `${i.name} [${i.shape.join('×')}] ${i.dtype}`).join(', ')}`}
    </span>
  );
}
