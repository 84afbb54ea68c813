import { createSHA256 } from 'hash-wasm';

/**
 * The sha256 of a file, read in slices so a large file never sits in memory
 * (hash-wasm's incremental WebAssembly hasher; Web Crypto has no streaming digest).
 */
export async function sha256OfFile(file: Blob, onProgress: (done: number) => void, signal?: AbortSignal): Promise<string> {
  const hasher = await createSHA256();
  hasher.init();
  const SLICE = 8 * 1024 * 1024;
  for (let offset = 0; offset < file.size; offset += SLICE) {
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    const buf = new Uint8Array(await file.slice(offset, offset + SLICE).arrayBuffer());
    hasher.update(buf);
    onProgress(Math.min(file.size, offset + SLICE));
  }
  return hasher.digest('hex');
}
