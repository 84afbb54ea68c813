import { z } from 'zod';

/**
 * The parameter file of `mm-runner` (docs/runner.md), version 1: one JSON object whose
 * `schema` is `"mm-runner/1"`. This zod schema is the one source of truth: the server checks
 * uploads with it, and `mm-runner/schema/mm-runner-1.schema.json` (generated from it by
 * `pnpm --filter @mm/runner gen:schema`, checked by a test) is what the Python runner reads
 * its defaults and checks from.
 *
 * Objects are strict: a misspelt field is a problem named by its path, not silently ignored.
 */
export const PARAMETER_SCHEMA_ID = 'mm-runner/1';

export const RUNNER_TASKS = ['classification', 'detection', 'segmentation', 'passthrough', 'command'] as const;
export const DETECTION_FAMILIES = ['yolov3', 'yolov5', 'yolox'] as const;

const label = z.string().min(1).max(200);
const labels = z.array(label).min(1).max(10_000);

const Preprocess = z.strictObject({
  /** The model's input `[width, height]`; default the DPU input tensor's. */
  size: z.tuple([z.int().min(1).max(8192), z.int().min(1).max(8192)]).optional(),
  resize: z.enum(['stretch', 'letterbox']).default('stretch'),
  /** Subtracted from each channel (0–255 pixel values, in `channels` order)… */
  mean: z.tuple([z.number(), z.number(), z.number()]).default([0, 0, 0]),
  /** …then multiplied; the DPU input's fix_point scales the result to int8. */
  scale: z.tuple([z.number(), z.number(), z.number()]).default([1, 1, 1]),
  /** The channel order the model was trained on. */
  channels: z.enum(['rgb', 'bgr']).default('bgr'),
});

const Classification = z.strictObject({
  labels: labels.optional(),
  top_k: z.int().min(1).max(100).default(5),
});

const Detection = z.strictObject({
  family: z.enum(DETECTION_FAMILIES),
  /** Per output scale, the anchors as flat `w, h` pairs in input pixels (yolov3/yolov5); default the family's COCO anchors. */
  anchors: z.array(z.array(z.number().positive().max(100_000)).min(2).max(64).refine((a) => a.length % 2 === 0, 'must hold w, h pairs (an even count)')).min(1).max(8).optional(),
  /** Per output scale, its stride in input pixels; default [8, 16, 32]. */
  strides: z.array(z.int().min(1).max(1024)).min(1).max(8).optional(),
  classes: labels.optional(),
  conf: z.number().min(0).max(1).default(0.25),
  nms: z.number().min(0).max(1).default(0.45),
});

const Segmentation = z.strictObject({
  classes: labels.optional(),
  /** How much of the class colour covers the frame (0: none, 1: only the class map). */
  alpha: z.number().min(0).max(1).default(0.5),
});

const Run = z.strictObject({
  /** DPU runners working at once (`vart.Runner`s, each with its own thread). */
  threads: z.int().min(1).max(32).default(2),
  /** At most this many frames of the video (per pass); default all. */
  frames: z.int().min(1).max(10_000_000).optional(),
  /** Frames run through the model before timing starts; not counted, not in the output. */
  warmup: z.int().min(0).max(1000).default(5),
  /** Passes over the video, all timed and all in the output. */
  repeat: z.int().min(1).max(100).default(1),
});

const Output = z.strictObject({
  overlay: z.boolean().default(true),
  /** `h264`: an MP4 browsers play; `mjpeg`: an AVI, for a board whose ffmpeg lacks libx264. */
  codec: z.enum(['h264', 'mjpeg']).default('h264'),
  /** Frames per second of the output; default the input's. */
  fps: z.number().positive().max(1000).optional(),
});

export const ParameterFile = z
  .strictObject({
    schema: z.literal(PARAMETER_SCHEMA_ID),
    task: z.enum(RUNNER_TASKS),
    preprocess: Preprocess.default(Preprocess.parse({})),
    classification: Classification.optional(),
    detection: Detection.optional(),
    segmentation: Segmentation.optional(),
    /** `task: "command"`: the program and its arguments, run with the runner's environment. */
    command: z.array(z.string().max(4096)).min(1).max(1000).refine((argv) => argv[0] !== '', 'the program (first item) must not be empty').optional(),
    run: Run.default(Run.parse({})),
    output: Output.default(Output.parse({})),
  })
  .superRefine((file, ctx) => {
    if (file.task === 'command' && !file.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'is required when task is "command"' });
    if (file.task === 'detection' && !file.detection) ctx.addIssue({ code: 'custom', path: ['detection'], message: 'is required when task is "detection" (at least its family)' });
    const d = file.detection;
    if (d?.anchors && d.strides && d.anchors.length !== d.strides.length) {
      ctx.addIssue({ code: 'custom', path: ['detection', 'anchors'], message: `has ${d.anchors.length} scales but strides has ${d.strides.length}` });
    }
  });
export type ParameterFile = z.infer<typeof ParameterFile>;

/** The first problem of a parameter file: where (a JSON path such as `$.preprocess.size[0]`) and why. */
export interface ParameterProblem {
  path: string;
  message: string;
}

/** `['preprocess', 'size', 0]` → `$.preprocess.size[0]`; names that are not identifiers are quoted. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

export type ParameterCheck =
  /** Not a mm-runner parameter file (no `schema`, or not JSON at all): today's meaning, not checked. */
  | { kind: 'other' }
  | { kind: 'valid'; file: ParameterFile }
  | { kind: 'invalid'; problem: ParameterProblem };

/**
 * Checks the text of an uploaded parameter file. Only a JSON object that claims
 * `"schema": "mm-runner/1"` is held to the schema; a JSON object naming another `schema`
 * that starts with `mm-runner/` is refused too (an unknown version). Anything else — not
 * JSON, no `schema` — keeps its old meaning and is left alone.
 */
export function checkParameterFile(text: string): ParameterCheck {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { kind: 'other' };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || !('schema' in raw)) return { kind: 'other' };
  const schema = (raw as { schema: unknown }).schema;
  if (schema !== PARAMETER_SCHEMA_ID) {
    if (typeof schema === 'string' && schema.startsWith('mm-runner/')) {
      return { kind: 'invalid', problem: { path: '$.schema', message: `${JSON.stringify(schema)} is not a version this server knows (it knows "${PARAMETER_SCHEMA_ID}")` } };
    }
    return { kind: 'other' };
  }
  const parsed = ParameterFile.safeParse(raw);
  if (parsed.success) return { kind: 'valid', file: parsed.data };
  const issue = parsed.error.issues[0]!;
  // An unknown field is pointed at itself, not at the object holding it.
  const where = issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
  return { kind: 'invalid', problem: { path: jsonPath(where), message: issueMessage(issue) } };
}

/** A reason in the words the rest of the API uses ("must be …"), whatever zod's wording. */
function issueMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.length > 1 ? `unknown fields ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : 'unknown field';
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_type':
      if (issue.expected === 'int') return 'must be a whole number';
      if (issue.expected === 'tuple' || issue.expected === 'array') return 'must be an array';
      return `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    case 'too_small':
      if (issue.origin === 'array') return `must have at least ${issue.minimum} item${issue.minimum === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return issue.minimum === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'array') return `must have at most ${issue.maximum} item${issue.maximum === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${issue.maximum}`;
    default:
      return issue.message;
  }
}
