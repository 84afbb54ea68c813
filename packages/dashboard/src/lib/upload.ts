import { signal, type Signal } from '@preact/signals';
import * as tus from 'tus-js-client';
import { authHeaders, client, unwrap, type FileKind, type FileRecord } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { sha256OfFile } from './sha256.ts';

export type UploadPhase = 'hashing' | 'checking' | 'uploading' | 'paused' | 'done' | 'failed';

export interface UploadState {
  phase: UploadPhase;
  filename: string;
  size: number;
  bytesDone: number;
  /** Bytes per second, smoothed over the last seconds. */
  speed: number;
  /** Seconds left at that speed. */
  eta: number;
  /** The server already held the content: attached by digest, nothing sent. */
  deduplicated: boolean;
  /** Continued from bytes an earlier attempt (or page) had sent. */
  resumedFrom: number;
  error: unknown;
}

export interface UploadHandle {
  state: Signal<UploadState>;
  cancel(): void;
  done: Promise<FileRecord | undefined>;
}

/** Speed over a sliding window of progress samples. */
class Rate {
  private samples: Array<{ t: number; bytes: number }> = [];
  add(bytes: number): number {
    const t = performance.now();
    this.samples.push({ t, bytes });
    while (this.samples.length > 2 && t - this.samples[0]!.t > 5000) this.samples.shift();
    const first = this.samples[0]!;
    const dt = (t - first.t) / 1000;
    return dt > 0.2 ? (bytes - first.bytes) / dt : 0;
  }
}

/**
 * Puts one file into an invocation's slot: sha256 first (in the browser, streamed); if the
 * server already holds that content it is attached by digest at once
 * (`PUT …/files/<kind>/`); otherwise it is sent with tus to `/api/uploads/`, resumable after
 * a dropped connection (retries) or a reload (the upload URL is kept in localStorage, keyed by
 * invocation, kind and file). A server without `/api/uploads/` gets a plain multipart POST.
 */
export function startUpload(invocationId: number, kind: FileKind, file: File): UploadHandle {
  const state = signal<UploadState>({
    phase: 'hashing',
    filename: file.name,
    size: file.size,
    bytesDone: 0,
    speed: 0,
    eta: Infinity,
    deduplicated: false,
    resumedFrom: 0,
    error: null,
  });
  const abort = new AbortController();
  let tusUpload: tus.Upload | undefined;
  let xhr: XMLHttpRequest | undefined;
  const set = (patch: Partial<UploadState>) => (state.value = { ...state.value, ...patch });
  const rate = new Rate();
  const progress = (done: number) => {
    const speed = rate.add(done);
    set({ bytesDone: done, speed, eta: speed > 0 ? (file.size - done) / speed : Infinity });
  };

  // Pausing settles the upload at once (tus's abort does not call back).
  const aborted = new Promise<never>((_resolve, reject) =>
    abort.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true }),
  );
  aborted.catch(() => undefined);

  const done = (async (): Promise<FileRecord | undefined> => {
    try {
      const sha256 = await sha256OfFile(file, (n) => set({ bytesDone: n }), abort.signal);
      set({ phase: 'checking', bytesDone: 0 });
      const attached = await attachByDigest(invocationId, kind, sha256, file.name);
      if (attached) {
        set({ phase: 'done', bytesDone: file.size, deduplicated: true });
        return attached;
      }
      set({ phase: 'uploading' });
      const sending = (await tusAvailable())
        ? sendWithTus(invocationId, kind, file, sha256, progress, (u) => (tusUpload = u), (from) => set({ resumedFrom: from }))
        : sendMultipart(invocationId, kind, file, progress, (x) => (xhr = x));
      const record = await Promise.race([sending, aborted]);
      set({ phase: 'done', bytesDone: file.size });
      return record;
    } catch (err) {
      if (abort.signal.aborted) {
        set({ phase: 'paused' });
        return undefined;
      }
      set({ phase: 'failed', error: err });
      return undefined;
    }
  })();

  return {
    state,
    done,
    cancel() {
      abort.abort();
      // abort(false): stop sending but keep the upload on the server, so it can resume.
      void tusUpload?.abort(false);
      xhr?.abort();
    },
  };
}

async function attachByDigest(invocationId: number, kind: FileKind, sha256: string, filename: string): Promise<FileRecord | undefined> {
  try {
    return await unwrap(client.PUT('/api/invocations/{id}/files/{kind}/', { params: { path: { id: invocationId, kind } }, body: { sha256, filename } }));
  } catch (err) {
    // content_not_found: the server lacks it, so upload. A server without attach-by-digest
    // (404 route_not_found, 405) also just means: upload.
    if (err instanceof ApiProblem && (err.status === 404 || err.status === 405)) return undefined;
    throw err;
  }
}

let tusProbe: Promise<boolean> | undefined;
/** Whether the server speaks tus at /api/uploads/ (OPTIONS answers Tus-Version). */
function tusAvailable(): Promise<boolean> {
  tusProbe ??= fetch('/api/uploads/', { method: 'OPTIONS', headers: authHeaders(), credentials: 'same-origin' })
    .then((r) => r.ok && r.headers.has('tus-version'))
    .catch(() => false);
  return tusProbe;
}

function sendWithTus(
  invocationId: number,
  kind: FileKind,
  file: File,
  sha256: string,
  onProgress: (done: number) => void,
  keep: (u: tus.Upload) => void,
  onResume: (from: number) => void,
): Promise<FileRecord | undefined> {
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(file, {
      endpoint: '/api/uploads/',
      metadata: { invocation_id: String(invocationId), file_type: kind, filename: file.name, sha256 },
      headers: authHeaders(),
      // 8 MiB PATCHes: a dropped connection loses at most one of them, and progress is real (XHR).
      chunkSize: 8 * 1024 * 1024,
      retryDelays: [0, 1000, 2000, 4000, 8000, 15000, 30000],
      // Resume across reloads: the same invocation, slot and file continue the same upload.
      fingerprint: async (f) => {
        const ff = f as File;
        return ['mm', invocationId, kind, ff.name, ff.size, ff.lastModified, sha256].join(':');
      },
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      onProgress: (sent) => onProgress(sent),
      onError: (err) => {
        const res = (err as tus.DetailedError).originalResponse;
        if (res) {
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(res.getBody()) as Record<string, unknown>;
          } catch {
            /* not JSON */
          }
          reject(
            new ApiProblem(
              res.getStatus(),
              typeof body.code === 'string' ? body.code : `http_${res.getStatus()}`,
              typeof body.title === 'string' ? body.title : 'Upload failed',
              typeof body.detail === 'string' ? body.detail : err.message,
            ),
          );
        } else reject(ApiProblem.network(err));
      },
      onSuccess: (payload) => {
        // The server may answer the last PATCH with the attached file record.
        try {
          const body = payload.lastResponse.getBody();
          resolve(body ? (JSON.parse(body) as FileRecord) : undefined);
        } catch {
          resolve(undefined);
        }
      },
    });
    keep(upload);
    void upload.findPreviousUploads().then((previous) => {
      const last = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0];
      if (last) {
        upload.resumeFromPreviousUpload(last);
        // tus reports the first progress from the server's offset; say where we resumed.
        const once = upload.options.onProgress;
        upload.options.onProgress = (sent, total) => {
          onResume(sent);
          upload.options.onProgress = once;
          once?.(sent, total);
        };
      }
      upload.start();
    });
  });
}

function sendMultipart(
  invocationId: number,
  kind: FileKind,
  file: File,
  onProgress: (done: number) => void,
  keep: (x: XMLHttpRequest) => void,
): Promise<FileRecord> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    keep(xhr);
    xhr.open('POST', `/api/invocations/${invocationId}/upload/`);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onerror = () => reject(ApiProblem.network(new Error('the connection dropped')));
    xhr.onabort = () => reject(new DOMException('aborted', 'AbortError'));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as FileRecord);
      else void ApiProblem.fromResponse(new Response(xhr.responseText, { status: xhr.status })).then(reject);
    };
    const form = new FormData();
    form.append('file_type', kind);
    form.append('file', file);
    xhr.send(form);
  });
}

/**
 * Stores a file on the server by its sha256, attached to nothing (a PAC archive a
 * `pac_install` rollout then names): tus to `/api/uploads/` with only `filename` and `sha256`,
 * resumable after a dropped connection or a reload (the same file continues its upload).
 */
export function uploadContent(file: File, sha256: string, onProgress: (done: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(file, {
      endpoint: '/api/uploads/',
      metadata: { filename: file.name, sha256 },
      headers: authHeaders(),
      chunkSize: 8 * 1024 * 1024,
      retryDelays: [0, 1000, 2000, 4000, 8000, 15000, 30000],
      fingerprint: async () => ['mm', 'content', file.name, file.size, file.lastModified, sha256].join(':'),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      onProgress: (sent) => onProgress(sent),
      onError: (err) => {
        const res = (err as tus.DetailedError).originalResponse;
        reject(res ? new ApiProblem(res.getStatus(), `http_${res.getStatus()}`, 'Upload failed', err.message) : ApiProblem.network(err));
      },
      onSuccess: () => resolve(),
    });
    void upload.findPreviousUploads().then((previous) => {
      const last = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0];
      if (last) upload.resumeFromPreviousUpload(last);
      upload.start();
    });
  });
}
