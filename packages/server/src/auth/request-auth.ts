import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './principal.ts';

/** Per-request auth state, reachable from the route handler through async context. */
export interface RequestAuth {
  principal: Principal;
  /** Whether auth is on for this server (a user exists or MM_API_TOKEN is set). */
  authOn: boolean;
  ip: string | null;
  requestId: string | null;
  /** What the audit entry of this request names as its target (default: the request path). */
  auditTarget?: string;
  auditDetail?: Record<string, unknown>;
  /** An audit action the handler asks for when its route has none (or a different one). */
  auditAction?: string;
}

const storage = new AsyncLocalStorage<RequestAuth>();

export function runWithAuth<T>(auth: RequestAuth, fn: () => T): T {
  return storage.run(auth, fn);
}

/** The auth state of the request being handled; throws outside the auth middleware. */
export function requestAuth(): RequestAuth {
  const a = storage.getStore();
  if (!a) throw new Error('requestAuth() called outside an authenticated request');
  return a;
}

/** The acting username (`MM_API_TOKEN` for the shared token); null when auth is off or outside a request. */
export function currentActor(): string | null {
  return storage.getStore()?.principal.username ?? null;
}

/** Names the audit target of the current request (e.g. the id a create made). No-op outside a request. */
export function setAuditTarget(target: string, detail?: Record<string, unknown>): void {
  const a = storage.getStore();
  if (!a) return;
  a.auditTarget = target;
  if (detail) a.auditDetail = detail;
}

/**
 * Asks for an audit entry for this request even where its route records none: a tus PATCH
 * is audited only when it attaches the file (one entry per upload, not one per chunk).
 */
export function auditAs(action: string, target: string, detail?: Record<string, unknown>): void {
  const a = storage.getStore();
  if (!a) return;
  a.auditAction = action;
  setAuditTarget(target, detail);
}
