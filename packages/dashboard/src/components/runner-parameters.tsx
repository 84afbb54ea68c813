import { PREPROCESS_PRESETS, parameterTemplateText, TEMPLATE_DEFAULTS, type TemplateFields } from '@mm/runner/template';
import { useEffect, useState } from 'preact/hooks';
import type { FileRecord } from '../api/client.ts';
import { ErrorBox } from './error-box.tsx';

const TASKS: { value: TemplateFields['task']; label: string }[] = [
  { value: 'classification', label: 'Classification (top-k labels)' },
  { value: 'detection', label: 'Detection (YOLO family)' },
  { value: 'segmentation', label: 'Segmentation (class map)' },
  { value: 'passthrough', label: 'Passthrough (timing only)' },
  { value: 'command', label: 'Command (my own program)' },
];

/**
 * Writes an mm-runner parameter file (docs/runner.md) from a few fields, shows the JSON it
 * makes and uploads it as the invocation's parameter file. The server checks it again; its
 * answer (400 `invalid_parameter_file` with the field) shows here.
 */
export function RunnerParameters({ invocationId, current, onUploaded, onClose }: { invocationId: number; current: FileRecord | null; onUploaded: () => void; onClose: () => void }) {
  const [f, setF] = useState<TemplateFields>(TEMPLATE_DEFAULTS);
  const [error, setError] = useState<unknown>(null);
  const [sending, setSending] = useState(false);
  const [loaded, setLoaded] = useState('');
  const set = <K extends keyof TemplateFields>(key: K, value: TemplateFields[K]) => setF((old) => ({ ...old, [key]: value }));
  const num = (key: keyof TemplateFields) => (e: Event) => set(key, Number((e.target as HTMLInputElement).value) as never);
  const text = (key: keyof TemplateFields) => (e: Event) => set(key, (e.target as HTMLInputElement).value as never);
  const json = parameterTemplateText(f);

  // Start from the invocation's parameter file when it is one of mm-runner's.
  useEffect(() => {
    if (!current || current.size > 1024 * 1024) return;
    let stop = false;
    void fetch(current.url)
      .then((r) => (r.ok ? r.json() : undefined))
      .then((raw: unknown) => {
        if (stop) return;
        const from = fieldsFrom(raw);
        if (from) {
          setF(from);
          setLoaded(current.filename);
        }
      })
      .catch(() => {});
    return () => {
      stop = true;
    };
  }, [current?.sha256]);

  async function upload() {
    setError(null);
    setSending(true);
    try {
      const { startUpload } = await import('../lib/upload.ts');
      const h = startUpload(invocationId, 'parameter', new File([json], 'mm-runner.json', { type: 'application/json' }));
      await h.done;
      const st = h.state.value;
      if (st.phase === 'failed') setError(st.error);
      else if (st.phase === 'done') onUploaded();
    } catch (err) {
      setError(err);
    } finally {
      setSending(false);
    }
  }

  const task = f.task;
  const names = task === 'classification' ? 'Labels' : 'Class names';
  return (
    <div class="card stack runner-params" data-testid="runner-parameters">
      <div class="page-head">
        <h3 id="runner-params-title">mm-runner parameters</h3>
        <button type="button" class="link" onClick={onClose}>
          Close
        </button>
      </div>
      <p class="small muted">
        For boards that run mm-runner, the default runner: the model (.xmodel weights) runs over the input video on the DPU.
        {loaded && ` Started from ${loaded}.`}
      </p>
      <div class="grid params-grid">
        <label>
          Task
          <select aria-label="Task" value={task} onChange={text('task')}>
            {TASKS.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        </label>
        {task === 'command' ? (
          <label class="wide">
            Command
            <input aria-label="Command" value={f.command} onInput={text('command')} placeholder='python3 my_run.py --video "$MM_INPUT_VIDEO"' spellcheck={false} />
            <span class="small muted">Run with the run's MM_* variables; split on spaces, quotes keep theirs.</span>
          </label>
        ) : (
          <>
            <label>
              Resize
              <select aria-label="Resize" value={f.resize} onChange={text('resize')}>
                <option value="stretch">Stretch</option>
                <option value="letterbox">Letterbox</option>
              </select>
            </label>
            <label>
              Channel order
              <select aria-label="Channel order" value={f.channels} onChange={text('channels')}>
                <option value="bgr">BGR</option>
                <option value="rgb">RGB</option>
              </select>
            </label>
            <label>
              Pixel values
              <select
                aria-label="Pixel values"
                value={Object.entries(PREPROCESS_PRESETS).find(([, p]) => p.mean === f.mean && p.scale === f.scale)?.[0] ?? 'custom'}
                onChange={(e) => {
                  const p = PREPROCESS_PRESETS[(e.target as HTMLSelectElement).value as keyof typeof PREPROCESS_PRESETS];
                  if (p) setF((old) => ({ ...old, ...p }));
                }}
              >
                <option value="raw">0–255 as they are</option>
                <option value="unit">0–1 (× 1/255)</option>
                <option value="imagenet">ImageNet mean and std</option>
                <option value="custom" disabled>
                  Custom (below)
                </option>
              </select>
            </label>
            <label>
              Mean (per channel)
              <input aria-label="Mean (per channel)" value={f.mean} onInput={text('mean')} spellcheck={false} />
            </label>
            <label>
              Scale (per channel)
              <input aria-label="Scale (per channel)" value={f.scale} onInput={text('scale')} spellcheck={false} />
            </label>
          </>
        )}
        {task === 'detection' && (
          <>
            <label>
              YOLO family
              <select aria-label="YOLO family" value={f.family} onChange={text('family')}>
                <option value="yolov3">YOLOv3</option>
                <option value="yolov5">YOLOv5</option>
                <option value="yolox">YOLOX</option>
              </select>
            </label>
            <label>
              Confidence
              <input aria-label="Confidence" type="number" min={0} max={1} step={0.05} value={f.conf} onInput={num('conf')} />
            </label>
            <label>
              NMS IoU
              <input aria-label="NMS IoU" type="number" min={0} max={1} step={0.05} value={f.nms} onInput={num('nms')} />
            </label>
          </>
        )}
        {task === 'classification' && (
          <label>
            Top k
            <input aria-label="Top k" type="number" min={1} max={100} value={f.topK} onInput={num('topK')} />
          </label>
        )}
        {task === 'segmentation' && (
          <label>
            Overlay opacity
            <input aria-label="Overlay opacity" type="number" min={0} max={1} step={0.1} value={f.alpha} onInput={num('alpha')} />
          </label>
        )}
        {(task === 'classification' || task === 'detection' || task === 'segmentation') && (
          <label class="wide">
            {names} (one per line, as many as the model's classes; empty: “class 0”, “class 1”…)
            <textarea aria-label={names} rows={4} value={f.labels} onInput={text('labels')} spellcheck={false} />
          </label>
        )}
        {task !== 'command' && (
          <>
            <label>
              DPU threads
              <input aria-label="DPU threads" type="number" min={1} max={32} value={f.threads} onInput={num('threads')} />
            </label>
            <label>
              Frames (0: all)
              <input aria-label="Frames (0: all)" type="number" min={0} value={f.frames} onInput={num('frames')} />
            </label>
            <label>
              Warm-up frames
              <input aria-label="Warm-up frames" type="number" min={0} max={1000} value={f.warmup} onInput={num('warmup')} />
            </label>
            <label>
              Passes
              <input aria-label="Passes" type="number" min={1} max={100} value={f.repeat} onInput={num('repeat')} />
            </label>
            <label>
              Output video
              <select aria-label="Output video" value={f.codec} onChange={text('codec')}>
                <option value="h264">H.264 MP4</option>
                <option value="mjpeg">Motion JPEG AVI</option>
              </select>
            </label>
            <label class="inline-check">
              <input type="checkbox" checked={f.overlay} onChange={(e) => set('overlay', (e.target as HTMLInputElement).checked)} />
              Draw the results
            </label>
          </>
        )}
      </div>
      <details>
        <summary class="small">The file ({json.length} bytes)</summary>
        <pre class="small params-json" data-testid="runner-parameters-json" tabIndex={0} role="region" aria-label="The parameter file">{json}</pre>
      </details>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      <div class="row wrap">
        <button type="button" class="primary" onClick={() => void upload()} disabled={sending}>
          {sending ? 'Uploading…' : current ? 'Replace the parameter file' : 'Upload as the parameter file'}
        </button>
      </div>
    </div>
  );
}

/** The form's fields from an mm-runner/1 file, or undefined when it is not one. */
function fieldsFrom(raw: unknown): TemplateFields | undefined {
  if (!raw || typeof raw !== 'object' || (raw as { schema?: unknown }).schema !== 'mm-runner/1') return undefined;
  const r = raw as Record<string, any>;
  const f: TemplateFields = { ...TEMPLATE_DEFAULTS };
  const pick = <T,>(v: unknown, ok: readonly T[], fallback: T): T => (ok.includes(v as T) ? (v as T) : fallback);
  f.task = pick(r.task, ['classification', 'detection', 'segmentation', 'passthrough', 'command'] as const, f.task);
  const p = r.preprocess ?? {};
  f.resize = pick(p.resize, ['stretch', 'letterbox'] as const, f.resize);
  f.channels = pick(p.channels, ['rgb', 'bgr'] as const, f.channels);
  if (Array.isArray(p.mean)) f.mean = p.mean.join(', ');
  if (Array.isArray(p.scale)) f.scale = p.scale.join(', ');
  const labels = r.classification?.labels ?? r.detection?.classes ?? r.segmentation?.classes;
  if (Array.isArray(labels)) f.labels = labels.join('\n');
  if (typeof r.classification?.top_k === 'number') f.topK = r.classification.top_k;
  f.family = pick(r.detection?.family, ['yolov3', 'yolov5', 'yolox'] as const, f.family);
  if (typeof r.detection?.conf === 'number') f.conf = r.detection.conf;
  if (typeof r.detection?.nms === 'number') f.nms = r.detection.nms;
  if (typeof r.segmentation?.alpha === 'number') f.alpha = r.segmentation.alpha;
  if (Array.isArray(r.command)) f.command = r.command.map((a: string) => (/\s/.test(a) || a === '' ? JSON.stringify(a) : a)).join(' ');
  const run = r.run ?? {};
  for (const [key, field] of [['threads', 'threads'], ['frames', 'frames'], ['warmup', 'warmup'], ['repeat', 'repeat']] as const) if (typeof run[key] === 'number') f[field] = run[key];
  if (typeof r.output?.overlay === 'boolean') f.overlay = r.output.overlay;
  f.codec = pick(r.output?.codec, ['h264', 'mjpeg'] as const, f.codec);
  return f;
}
