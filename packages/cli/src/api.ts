import { type ApiClient, ApiProblem, createApiClient, type paths } from '@mm/api-client';
import { ApiProblemError, CliError, InterruptedError, NotModelManagerError, unreachable } from './errors.ts';

export type { Board, FileRecord, Invocation, InvocationDetails, Operation, PacRecord, Schemas } from '@mm/api-client';

/** An openapi-fetch middleware (the shared client does not re-export openapi-fetch's types). */
type Middleware = Parameters<ApiClient['use']>[0];

/** What an openapi-fetch call resolves with. */
type Answer<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

/** A path of the API's OpenAPI document (so a path the server does not have fails the type-check). */
export type ApiPath = keyof paths;

/**
 * `/api/x/{id}/` with its parameters filled in, each segment encoded (a parameter may hold
 * slashes: the proxied script route).
 */
export function apiPath(template: ApiPath, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`apiPath: no value for {${name}} in ${template}`);
    return String(value).split('/').map(encodeURIComponent).join('/');
  });
}

const isJson = (res: Response) => /\bjson\b/i.test(res.headers.get('content-type') ?? '');

/**
 * The control plane's HTTP API for the client: `client` is the shared typed client (every
 * path, parameter and body from the server's OpenAPI document); `call()` turns its answers
 * into data or the client's errors (a problem, exit 3 for an unreachable server or one that
 * is not a Model Manager, exit 4 for auth). `fetchRaw()` is the escape hatch for what the
 * typed client cannot express (a streamed request body, an upload URL the server named).
 */
export class Api {
  readonly client: ApiClient;

  constructor(
    readonly server: string,
    readonly token: string | undefined,
  ) {
    this.client = createApiClient({ baseUrl: server, headers: () => this.authHeaders() });
    this.client.use(this.answerCheck());
  }

  url(pathname: string, query?: Record<string, string | number | undefined>): URL {
    const url = new URL(pathname, `${this.server}/`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    return url;
  }

  authHeaders(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  /** The data of a typed call, or the client's error for the answer. */
  async call<T>(answer: Answer<T>): Promise<T> {
    const r = await answer;
    if (!r.response.ok) throw this.problem(r.response, r.error);
    return r.data as T;
  }

  /** A typed call made with `parseAs: 'stream'` (or `'text'`): the answer itself when 2xx. */
  async answer(answer: Answer<unknown>): Promise<Response> {
    const r = await answer;
    if (!r.response.ok) throw this.problem(r.response, r.error);
    return r.response;
  }

  /** Any answer to a request the typed client cannot make; a network failure throws (exit 3). */
  async fetchRaw(url: URL | string, init: RequestInit & { expectJson?: boolean } = {}): Promise<Response> {
    const { expectJson = false, ...rest } = init;
    let res: Response;
    try {
      res = await fetch(url, { ...rest, headers: { ...this.authHeaders(), ...(rest.headers as Record<string, string> | undefined) } });
    } catch (err) {
      if (rest.signal?.aborted) throw new InterruptedError();
      throw unreachable(this.server, err);
    }
    this.checkAnswer(rest.method ?? 'GET', new URL(url), res, expectJson);
    return res;
  }

  /** The error for a non-2xx answer whose body was read already (`body`: parsed JSON or text). */
  problem(res: Response, body: unknown): CliError {
    return new ApiProblemError(ApiProblem.fromBody(res, body));
  }

  /** The error for a non-2xx answer not read yet. */
  async problemOf(res: Response): Promise<CliError> {
    return new ApiProblemError(await ApiProblem.fromResponse(res));
  }

  /**
   * Answers that are not the control plane's: an HTML page or a proxy's error instead of
   * JSON or problem+json. Says so (exit 3) instead of failing to parse.
   */
  private checkAnswer(method: string, url: URL, res: Response, expectJson: boolean): void {
    if (res.status === 204 || res.status === 304 || isJson(res)) return;
    // A 2xx without a type (tus's 201) has no body to read; a streamed file is not JSON.
    if (res.ok && (!expectJson || !res.headers.has('content-type'))) return;
    const what = `${method} ${url.pathname} answered HTTP ${res.status}${res.headers.get('content-type') ? ` (${res.headers.get('content-type')!.split(';')[0]})` : ''}`;
    if (res.status >= 502 && res.status <= 504) {
      throw unreachable(this.server, new Error(`a proxy answered: ${what}`));
    }
    throw new NotModelManagerError(this.server, what);
  }

  /** Network failures as exit 3 (Ctrl-C as an interruption); answers checked as above. */
  private answerCheck(): Middleware {
    return {
      onError: ({ error, request }) => (request.signal.aborted ? new InterruptedError() : unreachable(this.server, error)),
      onResponse: ({ request, response, options }) => {
        this.checkAnswer(request.method, new URL(request.url), response, options.parseAs === 'json');
        return undefined;
      },
    };
  }
}

export const INPUT_KINDS = ['parameter', 'bitstream', 'weights', 'input_video'] as const;
export type InputKind = (typeof INPUT_KINDS)[number];
