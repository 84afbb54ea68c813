import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

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
 * Waits until the port answers while `alive()` says the script still runs; false when the
 * deadline passes first or the script is gone (it crashed: no point waiting).
 */
export async function waitForPort(port: number, timeoutMs: number, alive: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await alive())) return false;
    if (await portAnswers(port, Math.min(1000, Math.max(50, deadline - Date.now())))) {
      // Answered: make sure it is our script that answers, not something that was there before.
      return Boolean(await alive());
    }
    await sleep(100);
  }
  return false;
}
