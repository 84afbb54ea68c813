import type { ChildProcess } from 'node:child_process';

/** Between SIGTERM and SIGKILL of a tool still running when the agent stops. */
const STOP_GRACE_MS = 2_000;
/** After SIGKILL: a process in uninterruptible sleep may take a moment to go. */
const KILL_WAIT_MS = 1_000;

/**
 * The board tools the agent has running right now (xlnx-config, xmutil, dfx-mgr-client,
 * xdputil). They are not the agent's to leave behind: a tool started a moment before the
 * agent stops (a facts probe, a PAC query) would otherwise outlive it and go on writing its
 * state (dfx-mgr's, the simulated board's) after the agent has exited, and a restarted agent
 * would race it. `stop()` ends them all — SIGTERM, SIGKILL after a grace — and resolves once
 * they are gone. Runs of invocations are not here: they have their own journal and recovery.
 */
export class ToolChildren {
  private readonly live = new Map<ChildProcess, { group: boolean; closed: Promise<void> }>();
  private stopping = false;

  /** Follows `child` until it exits; `group`: it leads a process group of its own (detached). */
  track(child: ChildProcess, group: boolean): void {
    if (child.pid === undefined) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    this.live.set(child, { group, closed });
    void closed.then(() => this.live.delete(child));
    // A tool started while stopping (a probe already on its way) goes at once, without a grace.
    if (this.stopping) signal(child, group, 'SIGKILL');
  }

  get count(): number {
    return this.live.size;
  }

  /** Ends every tool still running and waits until they are gone (bounded: grace + a second). */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopping = true;
    const running = [...this.live.entries()];
    if (running.length === 0) return;
    for (const [child, { group }] of running) signal(child, group, 'SIGTERM');
    const all = Promise.all(running.map(([, { closed }]) => closed));
    if (await settlesWithin(all, graceMs)) return;
    for (const [child, { group }] of running) signal(child, group, 'SIGKILL');
    await settlesWithin(all, KILL_WAIT_MS);
  }
}

function signal(child: ChildProcess, group: boolean, name: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  // A tool that exited may have left its group behind (a grandchild holding its output open,
  // which is why 'close' has not come): the group is signalled all the same. Its id cannot
  // have been reused while a member lives.
  if (!group && (child.exitCode !== null || child.signalCode !== null)) return;
  try {
    if (group) process.kill(-child.pid, name);
    else child.kill(name);
  } catch {
    // Gone meanwhile.
  }
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
