/**
 * Debian's pdudaemon (LAVA's power daemon) for the power tests: started with a
 * configuration of its own on a free loopback port, its PDUs driven by `localcmdline`
 * commands (test/support/power-switch.mjs switches simulated boards' agents on and off).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { repoRoot } from './processes.ts';

export const PDUDAEMON_BIN = '/usr/sbin/pdudaemon';
export const POWER_SWITCH = path.join(repoRoot, 'test/support/power-switch.mjs');

export interface Pdudaemon {
  url: string;
  /** The folder of the switch: outlet specs, switch.log. */
  dir: string;
  /** What pdudaemon logged. */
  log(): string;
  /** The switch's commands so far, as `<outlet> <on|off>` lines. */
  switched(): Promise<string[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function havePdudaemon(): Promise<boolean> {
  return fs.access(PDUDAEMON_BIN).then(
    () => true,
    () => false,
  );
}

/** Starts pdudaemon with one PDU, `pduName`, whose outlets are the switch's (test/support/power-switch.mjs in `dir`). */
export async function startPdudaemon(dir: string, pduName = 'lab-pdu'): Promise<Pdudaemon> {
  await fs.mkdir(dir, { recursive: true });
  const port = await freePort();
  const sw = (what: 'on' | 'off') => `${process.execPath} ${POWER_SWITCH} ${what} %s ${dir}`;
  const conf = {
    daemon: { hostname: '127.0.0.1', port, logging_level: 'DEBUG', listener: 'http' },
    pdus: { [pduName]: { driver: 'localcmdline', cmd_on: sw('on'), cmd_off: sw('off') } },
  };
  const confFile = path.join(dir, 'pdudaemon.conf');
  await fs.writeFile(confFile, JSON.stringify(conf, null, 2));
  await fs.writeFile(path.join(dir, 'switch.log'), '');
  const child: ChildProcess = spawn(PDUDAEMON_BIN, ['--conf', confFile, '--loglevel', 'DEBUG'], {
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Up once its listener answers (a request for no PDU: 500 "Invalid request", nothing switched).
  const deadline = Date.now() + 120_000; // its Python start takes seconds, minutes on a loaded machine
  for (;;) {
    const up = await fetch(`${url}/power/control/on?hostname=none&port=0`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`pdudaemon did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    dir,
    log: () => log,
    async switched() {
      const text = await fs.readFile(path.join(dir, 'switch.log'), 'utf8');
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ').slice(1).join(' '));
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What is plugged into an outlet: a board's agent, started by `on` and killed by `off`. */
export async function plugIn(
  pdu: Pdudaemon,
  outlet: number,
  agent: { argv: string[]; env: Record<string, string>; cwd: string; marker: string; log: string },
): Promise<void> {
  await fs.writeFile(path.join(pdu.dir, `outlet-${outlet}.json`), JSON.stringify(agent));
}
