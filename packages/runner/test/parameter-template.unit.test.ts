import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkParameterFile } from '../src/parameter-file.ts';
import { parameterTemplateText, splitArgs, TEMPLATE_DEFAULTS, type TemplateFields } from '../src/parameter-template.ts';

describe("the dashboard's parameter file template", () => {
  it('makes a valid file for every task from the defaults', () => {
    for (const task of ['classification', 'detection', 'segmentation', 'passthrough', 'command'] as const) {
      const check = checkParameterFile(parameterTemplateText({ ...TEMPLATE_DEFAULTS, task }));
      expect(check.kind, `${task}: ${JSON.stringify(check)}`).toBe('valid');
    }
  });

  it('makes a valid file whatever is typed into the form', () => {
    const text = fc.string({ maxLength: 60 });
    const num = fc.oneof(fc.double(), fc.integer({ min: -1e6, max: 1e6 }), fc.constant(Number.NaN));
    const fields: fc.Arbitrary<TemplateFields> = fc.record({
      task: fc.constantFrom('classification', 'detection', 'segmentation', 'passthrough', 'command'),
      resize: fc.constantFrom('stretch', 'letterbox'),
      channels: fc.constantFrom('rgb', 'bgr'),
      mean: text,
      scale: text,
      labels: fc.array(text, { maxLength: 20 }).map((l) => l.join('\n')),
      topK: num,
      family: fc.constantFrom('yolov3', 'yolov5', 'yolox'),
      conf: num,
      nms: num,
      alpha: num,
      command: text,
      threads: num,
      frames: num,
      warmup: num,
      repeat: num,
      overlay: fc.boolean(),
      codec: fc.constantFrom('h264', 'mjpeg'),
    });
    fc.assert(
      fc.property(fields, (f) => {
        const check = checkParameterFile(parameterTemplateText(f));
        expect(check.kind, JSON.stringify(check)).toBe('valid');
      }),
      { numRuns: 300 },
    );
  });

  it('splits a command line on spaces, quotes keeping theirs', () => {
    expect(splitArgs(`python3 run.py --name "my model" ''`)).toEqual(['python3', 'run.py', '--name', 'my model', '']);
  });
});
