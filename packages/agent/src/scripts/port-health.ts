import net from 'node:net';
import type { Clock } from '@mm/protocol';

/** One TCP connect to 127.0.0.1:port: true when something accepts it. */
export function portAnswers(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * After the port answered: watches that the script stays up for `stableMs` (`alive()` true
 * throughout: no exit, no restart by its supervisor); false as soon as it is not.
 */
export async function staysUp(stableMs: number, alive: () => boolean | Promise<boolean>, clock: Clock): Promise<boolean> {
  const until = clock.now() + stableMs;
  while (clock.now() < until) {
    if (!(await alive())) return false;
    await clock.sleep(Math.min(100, Math.max(1, until - clock.now())));
  }
  return Boolean(await alive());
}

/**
 * Waits until the port answers while `alive()` says the script still runs; false when the
 * deadline passes first or the script is gone (it crashed: no point waiting).
 */
export async function waitForPort(port: number, timeoutMs: number, alive: () => boolean | Promise<boolean>, clock: Clock): Promise<boolean> {
  const deadline = clock.now() + timeoutMs;
  while (clock.now() < deadline) {
    if (!(await alive())) return false;
    if (await portAnswers(port, Math.min(1000, Math.max(50, deadline - clock.now())))) {
      // Answered: make sure it is our script that answers, not something that was there before.
      return Boolean(await alive());
    }
    await clock.sleep(100);
  }
  return false;
}
