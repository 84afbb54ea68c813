import type { Clock } from '@mm/protocol';
import { isDatabaseUnavailable } from '../db/pg-error.ts';
import type { Logger } from '../logger.ts';

/** An outcome that could not be settled is tried again after this, doubling… */
export const OUTCOME_RETRY_FIRST_MS = 250;
/** …up to this, for as long as its link is open. */
export const OUTCOME_RETRY_MAX_MS = 5_000;
/**
 * Tries of an outcome that fails for a reason other than the database being away (e.g. its
 * output video could not be attached), before the operation is ended `failed`, visibly.
 */
export const OUTCOME_MAX_TRIES = 3;

/** The error code of an operation whose outcome the server could not record. */
export const OUTCOME_NOT_SETTLED = 'outcome_not_settled';

export interface OutcomeSettling {
  opId: number;
  /** One whole try: the output pulled (again) and attached, the operation ended, the agent acknowledged. */
  settle(): Promise<void>;
  /** Whether the board's link is open (the agent reports the outcome again only when it reconnects). */
  linked(): boolean;
  /** The last resort: the operation ends `failed` saying why, and the agent is acknowledged. */
  giveUp(err: unknown): Promise<void>;
  clock: Clock;
  log: Logger;
}

/**
 * Settles an agent's outcome, never leaving its operation `running` while the link is open
 * (docs/reliability.md). The agent sends an outcome again only when it reconnects, so one
 * whose settling failed would otherwise keep the operation running and the board busy for as
 * long as the link stays up:
 *
 * - the database is away: tried again, with a capped backoff, for as long as it takes;
 * - anything else (the output's content went missing from the store, …): tried again whole
 *   (the output is pulled again; attaching the same content again replaces nothing), and after
 *   OUTCOME_MAX_TRIES the operation is ended `failed` with `outcome_not_settled` and the
 *   agent acknowledged;
 * - the link closed: left to the agent's report after it reconnects (rethrown).
 */
export async function settleOutcomeWithRetries(s: OutcomeSettling): Promise<void> {
  let delay = OUTCOME_RETRY_FIRST_MS;
  let failures = 0;
  let givingUp: { err: unknown } | undefined;
  for (;;) {
    try {
      if (givingUp) await s.giveUp(givingUp.err);
      else await s.settle();
      return;
    } catch (err) {
      if (!s.linked()) throw err;
      if (isDatabaseUnavailable(err)) {
        s.log.warn({ err, op_id: s.opId, retry_in_ms: delay }, 'could not settle an outcome: the database is unreachable; trying again');
      } else if (givingUp) {
        throw err;
      } else if (++failures < OUTCOME_MAX_TRIES) {
        s.log.warn({ err, op_id: s.opId, try: failures, retry_in_ms: delay }, 'could not settle an outcome; trying it again');
      } else {
        s.log.error({ err, op_id: s.opId, tries: failures }, 'could not settle an outcome; the operation is failed');
        givingUp = { err };
        continue;
      }
      await new Promise<void>((resolve) => s.clock.setTimeout(resolve, delay));
      delay = Math.min(delay * 2, OUTCOME_RETRY_MAX_MS);
    }
  }
}
