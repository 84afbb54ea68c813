import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkParameterFile, jsonPath, JSON_SCHEMA_FILE, parameterJsonSchemaText } from '../src/index.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const cases = JSON.parse(fs.readFileSync(path.join(here, 'parameter-cases.json'), 'utf8')) as {
  cases: { file: unknown; valid?: boolean; path?: string }[];
};

describe('the mm-runner/1 parameter file', () => {
  it.each(cases.cases.map((c) => [JSON.stringify(c.file), c] as const))('%s', (_name, c) => {
    const check = checkParameterFile(JSON.stringify(c.file));
    if (c.valid) expect(check.kind).toBe('valid');
    else {
      expect(check.kind).toBe('invalid');
      if (check.kind === 'invalid') {
        expect(check.problem.path).toBe(c.path);
        expect(check.problem.message.length).toBeGreaterThan(3);
      }
    }
  });

  it('fills in the defaults', () => {
    const check = checkParameterFile('{"schema":"mm-runner/1","task":"classification"}');
    expect(check).toEqual({
      kind: 'valid',
      file: {
        schema: 'mm-runner/1',
        task: 'classification',
        preprocess: { resize: 'stretch', mean: [0, 0, 0], scale: [1, 1, 1], channels: 'bgr' },
        run: { threads: 2, warmup: 5, repeat: 1 },
        output: { overlay: true, codec: 'h264' },
      },
    });
  });

  it('leaves alone what is not a mm-runner file: not JSON, not an object, no schema, another schema', () => {
    for (const text of ['duration_s: 3', '[1, 2]', '"x"', '{"duration_s": 2, "exit_code": 0}', '{"schema": "https://json-schema.org/x"}', '']) {
      expect(checkParameterFile(text)).toEqual({ kind: 'other' });
    }
  });

  it('refuses a version of its own schema it does not know', () => {
    expect(checkParameterFile('{"schema":"mm-runner/2","task":"passthrough"}')).toMatchObject({ kind: 'invalid', problem: { path: '$.schema' } });
  });

  it('says where the problem is in words a person reads', () => {
    const check = checkParameterFile('{"schema":"mm-runner/1","task":"passthrough","preprocess":{"sise":[1,2]}}');
    expect(check).toEqual({ kind: 'invalid', problem: { path: '$.preprocess.sise', message: 'unknown field' } });
    expect(checkParameterFile('{"schema":"mm-runner/1","task":"passthrough","run":{"threads":0}}')).toMatchObject({ problem: { message: 'must be at least 1' } });
  });

  it('writes JSON paths with quoted names where needed', () => {
    expect(jsonPath([])).toBe('$');
    expect(jsonPath(['a', 0, 'b c', 'd'])).toBe('$.a[0]["b c"].d');
  });

  it('has its generated JSON Schema up to date (pnpm --filter @mm/runner gen:schema)', () => {
    const file = path.join(here, '..', JSON_SCHEMA_FILE);
    expect(fs.readFileSync(file, 'utf8')).toBe(parameterJsonSchemaText());
  });
});
