import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { systemClock, type Clock } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { writeFileAtomic } from '../journal/atomic-write.ts';
import { openUploadStream } from '../pac/upload-stream.ts';
import { RpcError, type RpcHandler } from '../rpc/rpc-registry.ts';
import { AGENT_VERSION } from '../version.ts';
import { DebArchiveError, unpackAgentVersion } from './deb-archive.ts';

/**
 * Agent updates on the board (docs/packages.md). The layout under MM_AGENT_DIR/versions is
 * shared with deploy/agent/mm-agent-start, which runs `current` (or the packaged version)
 * and is the watchdog: while `trial` exists, the new version must reconnect and delete it
 * before the deadline, or the script switches `current` back and starts the previous one.
 */
export const versionsDir = (agentDir: string) => path.join(agentDir, 'versions');
/** The start script sets this: only then is there a watchdog to switch back. */
export const START_SCRIPT_ENV = 'MM_AGENT_START_SCRIPT';
/** The exit code that asks the start script to start the (switched) version at once. */
export const RESTART_FOR_UPDATE_CODE = 75;

const VERSION_NAME = /^[0-9][A-Za-z0-9.+~-]{0,63}$/;

/** Reads `key=value` lines. */
async function readFields(file: string): Promise<Record<string, string> | undefined> {
  const text = await fsp.readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  return Object.fromEntries(text.split('\n').flatMap((l) => (l.includes('=') ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]] : [])));
}

async function replaceLink(link: string, target: string): Promise<void> {
  const tmp = `${link}.${randomBytes(4).toString('hex')}.tmp`;
  await fsp.symlink(target, tmp);
  await fsp.rename(tmp, link);
}

/** Writes the pulled bytes to `file` and answers their sha256. */
async function receive(source: NodeJS.ReadableStream, file: string): Promise<string> {
  const hash = createHash('sha256');
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      cb(null, chunk);
    },
  });
  await pipeline(source, tap, fs.createWriteStream(file, { mode: 0o600 }));
  return hash.digest('hex');
}

export interface UpdateHandlerOptions {
  agentDir: string;
  log: Logger;
  /** Called once the answer has gone: stop and exit with RESTART_FOR_UPDATE_CODE. */
  requestRestart: () => void;
  env?: NodeJS.ProcessEnv;
  /** The trial's deadline and the restart after the answer (default: the system clock). */
  clock?: Clock;
}

/** `agent.update`: receive, check, unpack beside, write the trial, switch, answer, restart. */
export function agentUpdateHandler(opts: UpdateHandlerOptions): RpcHandler<'agent.update'> {
  const clock = opts.clock ?? systemClock;
  return async ({ upload_id, version, sha256, confirm_within_s }, ctx) => {
    if (!(opts.env ?? process.env)[START_SCRIPT_ENV]) {
      throw new RpcError('update_unsupported', 'this agent was not started by mm-agent-start (the package\'s start script), so nothing could switch it back: update it by installing the package');
    }
    if (!VERSION_NAME.test(version)) throw new RpcError('invalid_agent_package', `not a version name: ${JSON.stringify(version)}`);
    const dir = versionsDir(opts.agentDir);
    await fsp.mkdir(dir, { recursive: true });
    const download = path.join(dir, `.download-${randomBytes(6).toString('hex')}.deb`);
    const staging = path.join(dir, `.${version}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const got = await receive(openUploadStream(upload_id, ctx), download);
      if (got !== sha256) throw new RpcError('checksum_mismatch', `the package's sha256 is ${got}, not ${sha256}`);
      try {
        await unpackAgentVersion(download, staging);
      } catch (err) {
        if (err instanceof DebArchiveError) throw new RpcError('invalid_agent_package', err.message);
        throw err;
      }
      if (!(await fsp.stat(path.join(staging, 'lib/mm-agent.mjs')).catch(() => undefined))) {
        throw new RpcError('invalid_agent_package', 'the package holds no opt/mm-agent/lib/mm-agent.mjs');
      }
      const current = path.join(dir, 'current');
      const previous = (await fsp.readlink(current).catch(() => undefined)) ?? 'packaged';
      if (previous === version) throw new RpcError('invalid_agent_package', `version ${version} is the one in use`);
      await fsp.rm(path.join(dir, version), { recursive: true, force: true });
      await fsp.rename(staging, path.join(dir, version));
      const deadline = Math.floor(clock.now() / 1000) + confirm_within_s;
      await writeFileAtomic(path.join(dir, 'trial'), `version=${version}\nprevious=${previous}\ndeadline=${deadline}\n`);
      await fsp.rm(path.join(dir, 'rolled-back'), { force: true });
      await replaceLink(current, version);
      opts.log.info({ version, previous, confirm_within_s }, 'agent update installed beside the running version; switching');
      clock.setTimeout(opts.requestRestart, 300).unref();
      return { accepted: true as const, previous_version: AGENT_VERSION };
    } finally {
      await fsp.rm(download, { force: true });
      await fsp.rm(staging, { recursive: true, force: true });
    }
  };
}

/**
 * Once the link is up: if this version is on trial, it has reconnected, so the update
 * stands (the start script stops watching). Also reports a rollback the script made.
 */
export async function confirmUpdate(agentDir: string, log: Logger): Promise<void> {
  const dir = versionsDir(agentDir);
  const trial = await readFields(path.join(dir, 'trial'));
  if (trial?.version === AGENT_VERSION) {
    await fsp.rm(path.join(dir, 'trial'), { force: true });
    log.info({ version: AGENT_VERSION, previous: trial.previous }, 'agent update confirmed: this version reconnected');
  }
  const rolledBack = await readFields(path.join(dir, 'rolled-back'));
  if (rolledBack) log.warn({ version: rolledBack.version, reason: rolledBack.reason }, 'an agent update was rolled back by the start script');
  await pruneVersions(dir, log);
}

/**
 * Versions nothing can start any more (replaced, or rolled back) are removed: the start script
 * runs only `current` or the packaged version. Never while a trial is pending (its `previous`
 * is what a rollback switches back to).
 */
async function pruneVersions(dir: string, log: Logger): Promise<void> {
  if (await readFields(path.join(dir, 'trial'))) return;
  const inUse = await fsp.readlink(path.join(dir, 'current')).catch(() => undefined);
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith('.') || e.name === inUse || !VERSION_NAME.test(e.name)) continue;
    await fsp.rm(path.join(dir, e.name), { recursive: true, force: true });
    log.info({ version: e.name }, 'removed an agent version no longer in use');
  }
}
