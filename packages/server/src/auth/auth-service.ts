import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { AuditLog } from './audit.ts';
import { LiveRequests } from './live-requests.ts';
import { apiTokenPrincipal, type Principal } from './principal.ts';
import { clearLoginFailures, loginRetryAfterS, recordLoginFailure } from './login-limiter.ts';
import { isRole, type Role } from './roles.ts';
import {
  authenticateSession,
  createSession,
  endSession,
  endSessionsOf,
  liveSessionIds,
  pruneSessions,
  type SessionLimits,
  type SessionOwner,
} from './sessions.ts';
import { secretHash } from './secrets.ts';
import { authenticateToken, createToken, existingTokenIds, listTokens, revokeToken, revokeTokensOf } from './tokens.ts';
import { anyUserExists, createUser, deleteUser, findUser, findUserByName, listUsers, updateUser, type UserRow } from './users.ts';
import { tokensEqual } from '../http/auth.ts';
import { ServiceUnavailableError } from '../errors.ts';

/** How often open streams re-check their credential (catches deletions made on another replica). */
const RECHECK_INTERVAL_MS = 5_000;

type Page = { limit: number; offset: number };

const userPrincipal = (user: UserRow, via: 'session' | 'token', credentialId: string): Principal => ({
  kind: 'user',
  userId: user.id,
  username: user.username,
  role: isRole(user.role) ? user.role : 'viewer',
  via,
  credentialId,
});

/**
 * Authentication for the HTTP API: who a bearer token or session cookie is, whether auth
 * is on at all, the audit log, and the live requests to cut when a credential goes.
 */
export class AuthService {
  readonly audit: AuditLog;
  readonly live = new LiveRequests();
  readonly sessionLimits: SessionLimits;
  /** Once a user exists auth stays on (the last admin cannot be deleted). */
  private usersExist = false;
  private recheckTimer: TimerHandle | undefined;

  constructor(
    readonly config: Config,
    readonly database: Database,
    readonly log: Logger,
    /** Expiries, idle times, sign-in limits and the re-check of open streams go by it. */
    readonly clock: Clock = systemClock,
  ) {
    this.audit = new AuditLog(database.db, log, clock);
    this.sessionLimits = { idleMs: config.sessionIdleMs, maxMs: config.sessionMaxMs };
  }

  get db() {
    return this.database.db;
  }

  /** Auth is on as soon as one user exists or MM_API_TOKEN is set. */
  async isOn(): Promise<boolean> {
    if (this.config.apiToken || this.usersExist) return true;
    // Checked on every request while off: a user made by `mm-server create-user` on a
    // shared PostgreSQL turns auth on without a restart.
    try {
      this.usersExist = await anyUserExists(this.db);
    } catch (err) {
      // Unknown whether auth is on: refuse (fail closed) with the outage's 503, not a 500.
      this.log.warn({ err }, 'cannot tell whether auth is on: database unreachable');
      throw new ServiceUnavailableError('database_unreachable', 'The database is unreachable; try again shortly.');
    }
    return this.usersExist;
  }

  // What the people-and-access routes read and change, each bound to the database (the
  // rules are in users.ts, tokens.ts, sessions.ts and login-limiter.ts).

  readonly users = {
    list: (page: Page) => listUsers(this.db, page),
    find: (id: string) => findUser(this.db, id),
    findByName: (typed: string) => findUserByName(this.db, typed),
    /** A new user; from now on auth is on. */
    create: async (username: string, password: string, role: Role) => {
      const row = await createUser(this.db, username, password, role);
      this.usersExist = true;
      return row;
    },
    update: (id: string, change: Parameters<typeof updateUser>[2]) => updateUser(this.db, id, change),
    delete: (id: string) => deleteUser(this.db, id),
  };

  /** Personal tokens; `userId` null: anyone's (an admin's request). */
  readonly tokens = {
    list: (userId: string | null, page: Page) => listTokens(this.db, userId, page),
    create: (userId: string, name: string, expiresAt: Date | null) => createToken(this.db, userId, name, expiresAt),
    revoke: (userId: string | null, id: string) => revokeToken(this.db, userId, id),
    revokeAllOf: (userId: string) => revokeTokensOf(this.db, userId),
  };

  /** Dashboard sessions, opened with the configured idle and absolute limits. */
  readonly sessions = {
    open: (owner: SessionOwner, ip: string | null) => createSession(this.db, owner, ip, this.sessionLimits, this.now()),
    end: (id: string) => endSession(this.db, id),
    /** Every session of the user but `exceptId` (the one asking, when it is a session). */
    endAllOf: (userId: string, exceptId?: string) => endSessionsOf(this.db, userId, exceptId),
  };

  /** Failed sign-ins and the wait they impose, by key (a user, or a token sign-in's address). */
  readonly signIns = {
    retryAfterS: (key: string, ip: string) => loginRetryAfterS(this.db, key, ip, this.now()),
    failed: (key: string, ip: string) => recordLoginFailure(this.db, key, ip, this.now()),
    succeeded: (key: string) => clearLoginFailures(this.db, key),
  };

  async principalForBearer(token: string): Promise<Principal | undefined> {
    if (this.config.apiToken && tokensEqual(token, this.config.apiToken)) return apiTokenPrincipal;
    const hit = await authenticateToken(this.db, token, this.now());
    return hit && userPrincipal(hit.user, 'token', hit.token.id);
  }

  async principalForSession(cookie: string): Promise<Principal | undefined> {
    const hit = await authenticateSession(this.db, cookie, this.sessionLimits, this.now());
    if (!hit) return undefined;
    if (hit.user) return userPrincipal(hit.user, 'session', hit.session.id);
    // Opened with MM_API_TOKEN: good while the setting still holds that token.
    const { envTokenHash } = hit.session;
    if (envTokenHash && this.config.apiToken && tokensEqual(envTokenHash, secretHash(this.config.apiToken))) {
      return { ...apiTokenPrincipal, via: 'session', credentialId: hit.session.id };
    }
    return undefined;
  }

  /**
   * A token given to the dashboard's sign-in: who it is and what its session is tied to, or
   * undefined when it is not valid now.
   */
  async ownerForToken(token: string): Promise<{ principal: Principal; owner: SessionOwner } | undefined> {
    if (this.config.apiToken && tokensEqual(token, this.config.apiToken)) {
      return { principal: apiTokenPrincipal, owner: { envTokenHash: secretHash(token) } };
    }
    const hit = await authenticateToken(this.db, token, this.now());
    if (!hit) return undefined;
    return {
      principal: userPrincipal(hit.user, 'token', hit.token.id),
      owner: { userId: hit.user.id, apiTokenId: hit.token.id, tokenExpiresAt: hit.token.expiresAt },
    };
  }

  /** Starts the periodic re-check of open streams' credentials and session pruning. */
  start(): void {
    let ticks = 0;
    this.recheckTimer = this.clock.setInterval(() => {
      void this.recheck(++ticks % 120 === 0).catch((err: unknown) => this.log.warn({ err }, 'credential re-check failed'));
    }, RECHECK_INTERVAL_MS);
    this.recheckTimer.unref();
  }

  stop(): void {
    this.clock.clearInterval(this.recheckTimer);
  }

  /** Now, as a Date (for the session, token and sign-in stores). */
  now(): Date {
    return new Date(this.clock.now());
  }

  /** Cuts live requests whose session or token no longer exists (deleted here or on another replica). */
  async recheck(prune = false): Promise<void> {
    const { sessions, tokens } = this.live.credentials();
    if (sessions.length) {
      const alive = await liveSessionIds(this.db, sessions, this.sessionLimits, this.now());
      for (const id of sessions) if (!alive.has(id)) this.live.cutCredential(id);
    }
    if (tokens.length) {
      const alive = await existingTokenIds(this.db, tokens, this.now());
      for (const id of tokens) if (!alive.has(id)) this.live.cutCredential(id);
    }
    if (prune) await pruneSessions(this.db, this.sessionLimits, this.now());
  }
}
