import type { Principal } from './principal.ts';

interface LiveRequest {
  principal: Principal;
  cut(): void;
}

/**
 * Authenticated requests still being answered (event streams, downloads, relays), so
 * that deleting a user, revoking a token or ending a session cuts them at once instead
 * of letting an open stream outlive its credential.
 */
export class LiveRequests {
  private readonly live = new Set<LiveRequest>();

  /** Registers a request; the returned function unregisters it (call it when the response closes). */
  add(principal: Principal, cut: () => void): () => void {
    const entry = { principal, cut };
    this.live.add(entry);
    return () => this.live.delete(entry);
  }

  get size(): number {
    return this.live.size;
  }

  /** Credentials of the live requests, for a periodic re-check against the database. */
  credentials(): { sessions: string[]; tokens: string[] } {
    const sessions = new Set<string>();
    const tokens = new Set<string>();
    for (const { principal: p } of this.live) {
      if (p.via === 'session' && p.credentialId) sessions.add(p.credentialId);
      if (p.via === 'token' && p.credentialId) tokens.add(p.credentialId);
    }
    return { sessions: [...sessions], tokens: [...tokens] };
  }

  /** Cuts every live request whose principal matches; returns how many. */
  cutWhere(match: (p: Principal) => boolean): number {
    let n = 0;
    for (const entry of [...this.live]) {
      if (!match(entry.principal)) continue;
      this.live.delete(entry);
      entry.cut();
      n++;
    }
    return n;
  }

  /** Cuts the user's live requests but `except` (the request doing it, which must get its answer). */
  cutUser(userId: string, except?: Principal): number {
    return this.cutWhere((p) => p.userId === userId && p !== except);
  }

  cutCredential(id: string, except?: Principal): number {
    return this.cutWhere((p) => p.credentialId === id && p !== except);
  }
}
