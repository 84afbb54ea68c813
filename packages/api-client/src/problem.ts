/** An API error (RFC 9457 problem details) or a network failure, in words a person understands. */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly errors: FieldProblem[] = [],
  ) {
    super(detail || title);
    this.name = 'ApiProblem';
  }

  static async fromResponse(res: Response): Promise<ApiProblem> {
    let body: unknown = {};
    try {
      body = await res.clone().json();
    } catch {
      // not JSON (a proxy's error page): status only
    }
    return ApiProblem.fromBody(res, body);
  }

  /** From an answer whose body was already parsed (openapi-fetch reads it before we see it). */
  static fromBody(res: Response, parsed: unknown): ApiProblem {
    const body = (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
    const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
    return new ApiProblem(
      res.status,
      str(body.code, `http_${res.status}`),
      str(body.title, res.statusText || `HTTP ${res.status}`),
      str(body.detail, ''),
      Array.isArray(body.errors) ? (body.errors as FieldProblem[]) : [],
    );
  }

  static network(err: unknown): ApiProblem {
    return new ApiProblem(0, 'network_error', 'No connection', err instanceof Error ? err.message : String(err));
  }
}

