import { ApiProblemError, type Problem, unreachable } from './errors.ts';

export interface RequestOptions {
  json?: unknown;
  body?: RequestInit['body'];
  headers?: Record<string, string>;
  signal?: AbortSignal;
  query?: Record<string, string | number | undefined>;
}

/** The control plane's HTTP API: auth header, problem answers as ApiProblemError, network errors as exit 3. */
export class Api {
  constructor(
    readonly server: string,
    readonly token: string | undefined,
  ) {}

  url(pathname: string, query?: RequestOptions['query']): URL {
    const url = new URL(pathname, `${this.server}/`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    return url;
  }

  authHeaders(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  /** Any answer (problems included); only a network failure throws. */
  async raw(method: string, pathname: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.authHeaders(), ...opts.headers };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    try {
      return await fetch(this.url(pathname, opts.query), { method, headers, body: body ?? null, signal: opts.signal ?? null });
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      throw unreachable(this.server, err);
    }
  }

  /** A 2xx answer, or throws the problem. */
  async request(method: string, pathname: string, opts: RequestOptions = {}): Promise<Response> {
    const res = await this.raw(method, pathname, opts);
    if (!res.ok) throw await problemOf(res);
    return res;
  }

  async json<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request(method, pathname, opts);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  get<T>(pathname: string, query?: RequestOptions['query']): Promise<T> {
    return this.json<T>('GET', pathname, { query });
  }
}

export async function problemOf(res: Response): Promise<ApiProblemError> {
  const text = await res.text().catch(() => '');
  let problem: Problem = { status: res.status, title: res.statusText };
  try {
    const parsed = JSON.parse(text) as Partial<Problem>;
    if (parsed && typeof parsed === 'object') problem = { ...parsed, status: res.status };
  } catch {
    if (text.trim()) problem.detail = `HTTP ${res.status}: ${text.trim().slice(0, 200)}`;
  }
  return new ApiProblemError(problem);
}

// ── the shapes the client reads ───────────────────────────────────────────────────────

export interface FileRecord {
  kind: string;
  filename: string;
  size: number;
  sha256: string;
  content_type: string;
  uploaded_at: string;
  url: string;
}

export interface Invocation {
  id: number;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
  files: Record<string, FileRecord | null>;
  operations?: Operation[];
}

export interface Operation {
  id: number;
  kind: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  board_id: string | null;
  invocation_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: { phase: string; bytes_done: number; bytes_total: number };
  result: unknown;
  error: { code: string; message: string } | null;
}

export interface Board {
  id: string;
  name: string;
  status: string;
  busy: boolean;
  last_seen_at: string | null;
  agent_version: string | null;
  hostname: string | null;
  active_pac: string | null;
  token?: string;
}

export const INPUT_KINDS = ['parameter', 'bitstream', 'weights', 'input_video'] as const;
export type InputKind = (typeof INPUT_KINDS)[number];
