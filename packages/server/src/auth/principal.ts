import type { Role } from './roles.ts';

/** Who a request acts as. */
export interface Principal {
  /** `user`: a person (token or session); `api_token`: MM_API_TOKEN; `anonymous`: auth is off. */
  kind: 'user' | 'api_token' | 'anonymous';
  userId: string | null;
  username: string | null;
  role: Role;
  /** How it authenticated; `credentialId` is the session's or personal token's id. */
  via: 'session' | 'token' | 'api_token' | 'none';
  credentialId: string | null;
}

export const API_TOKEN_NAME = 'MM_API_TOKEN';

export const anonymousPrincipal: Principal = {
  kind: 'anonymous',
  userId: null,
  username: null,
  role: 'admin',
  via: 'none',
  credentialId: null,
};

export const apiTokenPrincipal: Principal = {
  kind: 'api_token',
  userId: null,
  username: API_TOKEN_NAME,
  role: 'admin',
  via: 'api_token',
  credentialId: null,
};
