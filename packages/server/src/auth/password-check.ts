import type { AuthService } from './auth-service.ts';
import { InvalidCredentialsError, TooManyAttemptsError } from './errors.ts';
import { clearLoginFailures, loginLimitKey, loginRetryAfterS, recordLoginFailure } from './login-limiter.ts';
import { verifyAgainstDummy, verifyPassword } from './passwords.ts';
import type { UserRow } from './users.ts';

export interface PasswordAttempt {
  /** The user the attempt names (undefined: nobody by that name). */
  user: UserRow | undefined;
  /** What was typed as the name (the audit target of a failure; the limiter key when no user). */
  typed: string;
  password: string;
  ip: string;
  requestId: string | null;
  /** The audit action of a wrong password (`auth.login_failed`, `auth.password_change_failed`). */
  failedAction: string;
}

/**
 * Checks a password under the sign-in limits (per user, however the name was spelt, and
 * per address): 429 while limited, 401 `invalid_credentials` for an unknown user or a wrong
 * password (both after one scrypt, so timing does not tell which names exist); each
 * refusal is audited. Returns the user when the password is right.
 */
export async function checkPassword(auth: AuthService, a: PasswordAttempt): Promise<UserRow> {
  const { db } = auth;
  const key = loginLimitKey(a.user, a.typed);
  const now = auth.now();
  const retryAfter = await loginRetryAfterS(db, key, a.ip, now);
  if (retryAfter > 0) {
    await auth.audit.record({ action: 'auth.login_throttled', target: a.typed, actor: null, ip: a.ip, requestId: a.requestId });
    throw new TooManyAttemptsError(retryAfter);
  }
  const ok = a.user ? await verifyPassword(a.password, a.user.passwordHash) : await verifyAgainstDummy(a.password);
  if (!a.user || !ok) {
    await recordLoginFailure(db, key, a.ip, now);
    await auth.audit.record({ action: a.failedAction, target: a.typed, actor: null, ip: a.ip, requestId: a.requestId });
    throw new InvalidCredentialsError();
  }
  await clearLoginFailures(db, key);
  return a.user;
}
