import { Worker } from 'node:worker_threads';

/**
 * Hashes an open file (sha256, from its start to its end) on a worker thread: the agent's
 * event loop stays free to serve the same file to the server while its cache hashes it (an
 * output video: ~1 s of hashing per GiB that would otherwise sit between the frames it sends).
 *
 * The worker reads the descriptor itself (threads share the process's descriptors), so no
 * byte crosses between threads; the caller must keep `fd` open until this settles. Its code
 * is a string evaluated as CommonJS, so the bundled agent needs no second file.
 */
export function hashFdInWorker(fd: number, chunkBytes: number): Promise<{ sha256: string; size: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { fd, chunkBytes },
      // A few buffers and a hash: keep the thread's heap small.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
      stdout: false,
      stderr: false,
    });
    let settled = false;
    worker.once('message', (m: { sha256: string; size: number } | { error: string; code?: string }) => {
      settled = true;
      if ('error' in m) reject(Object.assign(new Error(m.error), m.code ? { code: m.code } : {}));
      else resolve(m);
    });
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the hashing thread exited with code ${code} before it answered`));
    });
  });
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
try {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(workerData.chunkBytes);
  let size = 0;
  for (;;) {
    const n = fs.readSync(workerData.fd, buf, 0, buf.length, size);
    if (n === 0) break;
    hash.update(buf.subarray(0, n));
    size += n;
  }
  parentPort.postMessage({ sha256: hash.digest('hex'), size });
} catch (err) {
  parentPort.postMessage({ error: String(err && err.message || err), code: err && err.code });
}
`;
