/**
 * An S3-compatible server for tests and benchmarks: `s3rver` (npm) in a child process, on
 * a free port, with its own folder and one bucket. Keys are s3rver's fixed `S3RVER`/`S3RVER`.
 *
 * With `MM_TEST_S3_ENDPOINT` (and `MM_TEST_S3_ACCESS_KEY_ID`, `MM_TEST_S3_SECRET_ACCESS_KEY`)
 * set, a real store is used instead (test/s3-radosgw/run.sh sets them for Ceph's radosgw):
 * each call gets a bucket of its own there, emptied and removed by `stop()`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

export interface S3Server {
  endpoint: string;
  bucket: string;
  directory: string;
  pid: number;
  /** The `MM_*` settings that point a control plane at it. */
  env: Record<string, string>;
  /** The options of an S3BlobStore on it. */
  storeOptions: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string; forcePathStyle: boolean };
  stop(): Promise<void>;
}


/** The `MM_*` settings of a control plane on the store. */
function storeEnv(o: S3Server['storeOptions']): Record<string, string> {
  return {
    MM_BLOB_STORE: 's3',
    MM_S3_ENDPOINT: o.endpoint,
    MM_S3_BUCKET: o.bucket,
    MM_S3_REGION: o.region,
    MM_S3_ACCESS_KEY_ID: o.accessKeyId,
    MM_S3_SECRET_ACCESS_KEY: o.secretAccessKey,
    MM_S3_FORCE_PATH_STYLE: o.forcePathStyle ? '1' : '0',
  };
}

export async function startS3Server(bucket = 'mm-test'): Promise<S3Server> {
  const external = process.env.MM_TEST_S3_ENDPOINT;
  if (external) return externalS3Store(external, `${bucket}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-s3rver-'));
  // s3rver's command line, with each object's calls atomic as on S3 (s3rver-per-key.cjs).
  const bin = path.join(path.dirname(new URL(import.meta.url).pathname), 's3rver-per-key.cjs');
  const child = spawn(process.execPath, [bin, '-d', directory, '-a', '127.0.0.1', '-p', '0', '--silent', '--configure-bucket', bucket], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`s3rver did not start within 30 s:\n${output}`)), 30_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /listening on [^:\s]+:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited:\n${output}`));
    });
  });
  // Keep draining its output so it never blocks on a full pipe.
  child.stdout!.resume();
  child.stderr!.resume();
  const endpoint = `http://127.0.0.1:${port}`;
  const storeOptions = { endpoint, bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
  return {
    endpoint,
    bucket,
    directory,
    pid: child.pid!,
    storeOptions,
    env: storeEnv(storeOptions),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}

/** A bucket of its own on the real store named by `MM_TEST_S3_*`. */
async function externalS3Store(endpoint: string, bucket: string): Promise<S3Server> {
  // The SDK is the server package's dependency, not the repository root's.
  const s3 = createRequire(path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../packages/server/package.json'))(
    '@aws-sdk/client-s3',
  ) as typeof import('../../packages/server/node_modules/@aws-sdk/client-s3/dist-types/index.js');
  const accessKeyId = process.env.MM_TEST_S3_ACCESS_KEY_ID ?? '';
  const secretAccessKey = process.env.MM_TEST_S3_SECRET_ACCESS_KEY ?? '';
  const client = new s3.S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  await client.send(new s3.CreateBucketCommand({ Bucket: bucket }));
  const storeOptions = { endpoint, bucket, region: 'us-east-1', accessKeyId, secretAccessKey, forcePathStyle: true };
  return {
    endpoint,
    bucket,
    directory: '',
    pid: 0,
    storeOptions,
    env: storeEnv(storeOptions),
    async stop() {
      for (;;) {
        const listed = await client.send(new s3.ListObjectsV2Command({ Bucket: bucket }));
        const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
        if (keys.length === 0) break;
        await client.send(new s3.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
      }
      // Unfinished multipart uploads keep a bucket from being removed (s3rver has no such listing).
      const uploads = await client.send(new s3.ListMultipartUploadsCommand({ Bucket: bucket })).catch(() => undefined);
      for (const u of uploads?.Uploads ?? []) await client.send(new s3.AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key!, UploadId: u.UploadId! }));
      await client.send(new s3.DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
  };
}
