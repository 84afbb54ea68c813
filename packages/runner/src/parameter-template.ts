/**
 * A mm-runner/1 parameter file from a few form fields (the dashboard's helper), with no
 * dependency (no zod in the browser's bundle): what it makes is valid by construction for
 * the fields it takes, and the server checks it again at upload (parameter-file.ts).
 */

export type TemplateTask = 'classification' | 'detection' | 'segmentation' | 'passthrough' | 'command';
export type TemplateFamily = 'yolov3' | 'yolov5' | 'yolox';

export interface TemplateFields {
  task: TemplateTask;
  resize: 'stretch' | 'letterbox';
  channels: 'rgb' | 'bgr';
  /** Three numbers each; fewer or non-numbers fall back to the defaults. */
  mean: string;
  scale: string;
  /** Class names (labels), one per line; empty lines dropped. */
  labels: string;
  topK: number;
  family: TemplateFamily;
  conf: number;
  nms: number;
  alpha: number;
  /** `task: command`: the program and its arguments, split on spaces (quotes keep a space). */
  command: string;
  threads: number;
  /** 0: every frame. */
  frames: number;
  warmup: number;
  repeat: number;
  overlay: boolean;
  codec: 'h264' | 'mjpeg';
}

export const TEMPLATE_DEFAULTS: TemplateFields = {
  task: 'classification',
  resize: 'stretch',
  channels: 'bgr',
  mean: '0, 0, 0',
  scale: '1, 1, 1',
  labels: '',
  topK: 5,
  family: 'yolov5',
  conf: 0.25,
  nms: 0.45,
  alpha: 0.5,
  command: '',
  threads: 2,
  frames: 0,
  warmup: 5,
  repeat: 1,
  overlay: true,
  codec: 'h264',
};

/** Common pre-processing: pixel values as they come, 0..1, or ImageNet's mean and std (RGB). */
export const PREPROCESS_PRESETS = {
  raw: { mean: '0, 0, 0', scale: '1, 1, 1' },
  unit: { mean: '0, 0, 0', scale: '0.00392157, 0.00392157, 0.00392157' },
  imagenet: { mean: '123.675, 116.28, 103.53', scale: '0.0171248, 0.017507, 0.0174292' },
} as const;

function triple(text: string, fallback: [number, number, number]): [number, number, number] {
  const values = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  return values.length === 3 && values.every((v) => Number.isFinite(v)) ? [values[0]!, values[1]!, values[2]!] : fallback;
}

const clamp = (v: number, lo: number, hi: number, fallback: number) => (Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : fallback);
const whole = (v: number, lo: number, hi: number, fallback: number) => Math.round(clamp(v, lo, hi, fallback));

/** Splits a command line on spaces; single or double quotes keep spaces inside an argument. */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  let started = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      started = true;
    } else if (/\s/.test(ch)) {
      if (started || current) out.push(current);
      current = '';
      started = false;
    } else current += ch;
  }
  if (started || current) out.push(current);
  return out;
}

const names = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim().slice(0, 200))
    .filter(Boolean)
    .slice(0, 10_000);

/** The parameter file's object for these fields. */
export function parameterTemplate(f: TemplateFields): Record<string, unknown> {
  const file: Record<string, unknown> = { schema: 'mm-runner/1', task: f.task };
  if (f.task !== 'command') {
    file.preprocess = { resize: f.resize, mean: triple(f.mean, [0, 0, 0]), scale: triple(f.scale, [1, 1, 1]), channels: f.channels };
  }
  const classes = names(f.labels);
  if (f.task === 'classification') file.classification = { ...(classes.length ? { labels: classes } : {}), top_k: whole(f.topK, 1, 100, 5) };
  if (f.task === 'detection') {
    file.detection = { family: f.family, ...(classes.length ? { classes } : {}), conf: clamp(f.conf, 0, 1, 0.25), nms: clamp(f.nms, 0, 1, 0.45) };
  }
  if (f.task === 'segmentation') file.segmentation = { ...(classes.length ? { classes } : {}), alpha: clamp(f.alpha, 0, 1, 0.5) };
  if (f.task === 'command') {
    const argv = splitArgs(f.command).map((a) => a.slice(0, 4096)).slice(0, 1000);
    file.command = argv.length && argv[0] ? argv : ['true'];
  }
  if (f.task !== 'command') {
    file.run = {
      threads: whole(f.threads, 1, 32, 2),
      ...(f.frames > 0 ? { frames: whole(f.frames, 1, 10_000_000, 1) } : {}),
      warmup: whole(f.warmup, 0, 1000, 5),
      repeat: whole(f.repeat, 1, 100, 1),
    };
    file.output = { overlay: f.overlay, codec: f.codec };
  }
  return file;
}

/** The file's text as uploaded: indented JSON with a final newline. */
export function parameterTemplateText(f: TemplateFields): string {
  return `${JSON.stringify(parameterTemplate(f), null, 2)}\n`;
}
