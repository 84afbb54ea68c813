import { checkParameterFile, PARAMETER_SCHEMA_ID } from '@mm/runner';
import { ApiError } from '../errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';

/** A parameter file up to this size is read and checked whole; mm-runner reads no more. */
export const PARAMETER_CHECK_MAX_BYTES = 4 * 1024 * 1024;
/** Of a larger one, this much is looked at for a claim of mm-runner's schema. */
const HEAD_BYTES = 64 * 1024;
const CLAIMS_SCHEMA = /"schema"\s*:\s*"mm-runner\//;

/** 400 `invalid_parameter_file`: the JSON path of the first problem and why (docs/runner.md). */
export function invalidParameterFile(path: string, message: string): ApiError {
  return new ApiError(
    400,
    'invalid_parameter_file',
    'Invalid Parameter File',
    `The parameter file claims "schema": "${PARAMETER_SCHEMA_ID}" and breaks it at ${path}: ${message}. Nothing was stored.`,
    [{ field: path, message }],
    { path },
  );
}

/**
 * Holds an uploaded parameter file to mm-runner's schema when it claims it (a JSON object
 * with `"schema": "mm-runner/1"`); anything else keeps its old meaning and passes. Throws
 * `invalid_parameter_file`; the caller then stores nothing.
 */
export async function checkStoredParameterFile(files: BlobStore, sha256: string, size: number): Promise<void> {
  if (size === 0) return;
  if (size > PARAMETER_CHECK_MAX_BYTES) {
    const head = await readText(files, sha256, Math.min(size, HEAD_BYTES));
    if (/^\s*\{/.test(head) && CLAIMS_SCHEMA.test(head)) {
      throw invalidParameterFile('$', `a parameter file of mm-runner is at most ${PARAMETER_CHECK_MAX_BYTES} bytes, this one is ${size}`);
    }
    return;
  }
  const check = checkParameterFile(await readText(files, sha256, size));
  if (check.kind === 'invalid') throw invalidParameterFile(check.problem.path, check.problem.message);
}

async function readText(files: BlobStore, sha256: string, bytes: number): Promise<string> {
  const stream = await files.open(sha256, { start: 0, end: bytes - 1 });
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    chunks.push(b);
    total += b.length;
    if (total >= bytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, bytes).toString('utf8');
}
