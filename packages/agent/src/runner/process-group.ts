import { systemClock, type Clock } from '@mm/protocol';
import fs from 'node:fs';
import fsp from 'node:fs/promises';

/** Sends `signal` to every process of group `pgid` it may signal; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    // Only members of another user are left (a runner started through sudo after sudo
    // itself ended): the group exists, the agent just may not signal it.
    if (code === 'EPERM') return true;
    throw err;
  }
}

/**
 * True while group `pgid` has a live (not zombie) member. Zombies matter where PID 1 does not
 * reap orphans (a container without an init): the kernel still counts them as members, so a
 * signal to the group "succeeds" long after everything in it has died.
 */
export function isGroupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true; // no /proc: trust the signal
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After "pid (comm) ": state, ppid, pgrp.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/**
 * The start time of process `pid` (field 22 of /proc/<pid>/stat, clock ticks since boot),
 * or null where there is no /proc or no such process. With the boot id it tells a
 * recorded process from a later one that reused its pid.
 */
export async function processStartTime(pid: number): Promise<string | null> {
  const stat = await fsp.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return null;
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

/** SIGTERM to the group, SIGKILL to what is left after `graceMs`; resolves once the group is gone (or given up on). */
export async function terminateGroup(pgid: number, graceMs: number, clock: Clock = systemClock): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const deadline = clock.now() + graceMs;
  while (clock.now() < deadline) {
    await clock.sleep(50);
    if (!isGroupAlive(pgid)) return;
  }
  signalGroup(pgid, 'SIGKILL');
  for (let i = 0; i < 100 && isGroupAlive(pgid); i++) await clock.sleep(20);
}
