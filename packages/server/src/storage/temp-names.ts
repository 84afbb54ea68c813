import { randomBytes } from 'node:crypto';
import os from 'node:os';

/**
 * Names of temporary writes (an ingest in progress) that say who writes them:
 * `<host>@<pid>-<time>-<random>`. Several replicas may share one store (a shared volume, a
 * bucket): the random part keeps their names apart, and the host and pid let a restarted
 * server tell its own crashed writes (remove now) from other replicas' writes in flight
 * (remove only once they are older than the grace period, as a crashed one of theirs is).
 */
export function tempName(): string {
  return `${encodeURIComponent(os.hostname())}@${process.pid}-${Date.now().toString(36)}-${randomBytes(8).toString('hex')}`;
}

/**
 * Whether a temporary write can be removed: it is older than `graceMs`, or this host wrote it
 * from a process that is no longer running (or from this very process's pid before a
 * restart: nothing of this process is written before its store's init).
 */
export function isAbandonedTemp(name: string, modifiedAt: Date, graceMs: number): boolean {
  // `<=`: with no grace, a file written in this very millisecond is abandoned too (the test of
  // init with no grace wrote its leftover in the same millisecond now and then).
  if (modifiedAt.getTime() <= Date.now() - graceMs) return true;
  const m = /^([^@/]+)@(\d+)-/.exec(name);
  if (!m || decodeURIComponent(m[1]!) !== os.hostname()) return false;
  const pid = Number(m[2]);
  return pid === process.pid || !processAlive(pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
