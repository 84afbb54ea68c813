import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { systemClock, type Clock } from '@mm/protocol';
import type { Enrollment } from '../config.ts';
import type { Logger } from '../logger.ts';
import { writeFileAtomic } from '../journal/atomic-write.ts';
import { parseRetryAfterMs } from '../link/backoff.ts';
import { boardFacts } from './board-facts.ts';
import { BoardFactsCollector } from '../board/board-facts.ts';

export const ENROLL_PATH = '/api/agent/enroll/';

/** The key was refused (401): wrong, expired, used up or deleted. Retrying will not help. */
export class EnrollmentRefusedError extends Error {
  override name = 'EnrollmentRefusedError';
}

/** The first machine id file that exists; else the last one is made with a random id. */
export async function machineId(files: readonly string[]): Promise<string> {
  for (const file of files) {
    const id = (await fsp.readFile(file, 'utf8').catch(() => '')).trim();
    if (id) return id;
  }
  const own = files[files.length - 1]!;
  const id = randomUUID().replaceAll('-', '');
  await fsp.mkdir(path.dirname(own), { recursive: true });
  await writeFileAtomic(own, `${id}\n`);
  return id;
}

/** The board's serial from its FRU EEPROMs or device tree (board-facts.ts), or undefined. */
async function boardSerial(root: string): Promise<string | undefined> {
  const facts = await new BoardFactsCollector({ root, agentDir: root, activePac: async () => null }).collect();
  return typeof facts.serial === 'string' && facts.serial.trim() ? facts.serial.trim() : undefined;
}

export interface EnrollOptions {
  serverUrl: string;
  enrollment: Enrollment;
  log: Logger;
  /** Waits between tries after a network error or a 5xx (grows to this cap). */
  maxDelayMs: number;
  signal?: AbortSignal;
  /** The waits between tries (default: the system clock). */
  clock?: Clock;
  /**
   * Where the board's FRU EEPROMs and device tree are read for its serial (MM_HOST_ROOT; `/`);
   * the serial names the board on the server. Left out (the simulated board, tests): none sent.
   */
  hostRoot?: string;
}

function enrollUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.protocol = url.protocol === 'wss:' ? 'https:' : url.protocol === 'ws:' ? 'http:' : url.protocol;
  url.pathname = url.pathname.replace(/\/+$/, '') + ENROLL_PATH;
  return url.toString();
}

/**
 * Exchanges the provisioning key for a board token (docs/enrollment.md): asks again after
 * Retry-After while the board waits for approval (202) or its address is throttled (429),
 * and after a backoff when the server cannot be reached. Writes the token to the token file (0600) and returns it.
 */
export async function enroll(opts: EnrollOptions): Promise<string> {
  const { enrollment, log } = opts;
  const clock = opts.clock ?? systemClock;
  const serial = opts.hostRoot ? await boardSerial(opts.hostRoot).catch(() => undefined) : undefined;
  const facts = { ...boardFacts(), ...(serial ? { serial } : {}) };
  const body = JSON.stringify({ key: enrollment.key, machine_id: await machineId(enrollment.machineIdFiles), hostname: os.hostname(), facts });
  const url = enrollUrl(opts.serverUrl);
  let delayMs = 1000;
  let saidPending = false;
  for (;;) {
    opts.signal?.throwIfAborted();
    let res: Response | undefined;
    try {
      res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...(opts.signal ? { signal: opts.signal } : {}) });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      log.warn({ err, url }, 'enrollment: cannot reach the control plane; trying again');
    }
    if (res?.status === 201) {
      const { board_id, token } = (await res.json()) as { board_id: string; token: string };
      await fsp.mkdir(path.dirname(enrollment.tokenFile), { recursive: true });
      await writeFileAtomic(enrollment.tokenFile, `${token}\n`);
      log.info({ board_id, token_file: enrollment.tokenFile }, 'enrolled: the board token is kept; the provisioning key is not needed any more');
      return token;
    }
    if (res?.status === 202) {
      const { board_id } = (await res.json()) as { board_id: string };
      if (!saidPending) log.info({ board_id }, 'enrolled, waiting for an admin to approve the board');
      saidPending = true;
      const retryAfterS = Number(res.headers.get('retry-after'));
      await clock.sleep(Number.isFinite(retryAfterS) && retryAfterS > 0 ? retryAfterS * 1000 : 5000, opts.signal);
      continue;
    }
    if (res?.status === 429) {
      // Too many refused enrolments from this address (docs/enrollment.md): a wait, not a refusal.
      await res.body?.cancel();
      const waitMs = parseRetryAfterMs(res.headers.get('retry-after') ?? undefined, clock.now()) ?? delayMs;
      log.warn({ retry_after_ms: waitMs }, 'enrollment: the control plane asks this address to wait; trying again then');
      await clock.sleep(Math.min(Math.max(waitMs, 1000), 15 * 60_000), opts.signal);
      continue;
    }
    if (res && res.status >= 400 && res.status < 500) {
      const detail = await res.text().catch(() => '');
      throw new EnrollmentRefusedError(`the control plane refused the provisioning key (HTTP ${res.status}): ${detail}`);
    }
    if (res) log.warn({ status: res.status }, 'enrollment: the control plane answered an error; trying again');
    await clock.sleep(Math.random() * delayMs, opts.signal);
    delayMs = Math.min(delayMs * 2, opts.maxDelayMs);
  }
}
