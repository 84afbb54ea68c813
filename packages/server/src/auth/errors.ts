import { ApiError } from '../errors.ts';

/** The caller is known but its role is too low (or the route is for users only). */
export class ForbiddenError extends ApiError {
  constructor(detail: string, code = 'forbidden') {
    super(403, code, 'Forbidden', detail);
  }
}

/** A browser marked this state-changing request as coming from another site. */
export class CrossOriginError extends ApiError {
  constructor(detail = 'State-changing requests must come from this server\'s own origin.') {
    super(403, 'cross_origin', 'Forbidden', detail);
  }
}

/**
 * The Host header names no host this server answers for (DNS rebinding defence).
 * 421 Misdirected Request: the request reached a server that is not the one it names.
 */
export class HostNotAllowedError extends ApiError {
  constructor(host: string) {
    super(421, 'host_not_allowed', 'Misdirected Request', `This server does not answer for host ${JSON.stringify(host)}; set MM_PUBLIC_URL or MM_ALLOWED_HOSTS.`);
  }
}

export class InvalidCredentialsError extends ApiError {
  constructor() {
    super(401, 'invalid_credentials', 'Unauthorized', 'Wrong username or password.');
  }
}

export class TooManyAttemptsError extends ApiError {
  constructor(retryAfterS: number) {
    super(429, 'too_many_attempts', 'Too Many Requests', `Too many failed sign-ins; try again in ${retryAfterS} s.`);
    this.headers['retry-after'] = String(retryAfterS);
  }
}

/** The server would listen beyond loopback with nobody able to sign in. */
export class OpenServerRefusedError extends Error {
  override name = 'OpenServerRefusedError';
}
