/**
 * Helpers the data-plane benchmarks share: random files of fresh content, process
 * figures from /proc (RSS, peak RSS, CPU, I/O), multipart uploads streamed from disk, and a
 * throwaway sshd on a loopback port for scp.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../../test/support/eventually.ts';

export const run = promisify(execFile);
export const MiB = 1024 * 1024;

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * MiB })) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function writeRandomFile(file: string, bytes: number): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    const block = randomBytes(4 * MiB);
    for (let at = 0, i = 0; at < bytes; at += block.length, i++) {
      block.writeUInt32BE(i, 0);
      await handle.write(block, 0, Math.min(block.length, bytes - at));
    }
  } finally {
    await handle.close();
  }
}

/** Makes the file new content: its first 16 bytes become random. */
export async function stamp(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.write(randomBytes(16), 0, 16, 0);
  } finally {
    await handle.close();
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function statusField(pid: number, field: string): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}
/** Peak RSS since the last resetPeakRss. */
export const peakRss = (pid: number) => statusField(pid, 'VmHWM');
export const rss = (pid: number) => statusField(pid, 'VmRSS');
/** Resets a process's peak RSS (Linux: `echo 5 > /proc/<pid>/clear_refs`). */
export const resetPeakRss = (pid: number) => fs.writeFile(`/proc/${pid}/clear_refs`, '5');

export interface Cpu {
  user: number;
  sys: number;
}
/** CPU seconds (user and system, every thread) a process has used so far. */
export async function cpuSeconds(pid: number): Promise<Cpu> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / 100, sys: Number(fields[12]) / 100 }; // clock ticks (USER_HZ = 100)
}
export const cpuSince = (from: Cpu, to: Cpu): Cpu => ({ user: to.user - from.user, sys: to.sys - from.sys });

/** Bytes a process read through syscalls (`rchar`) and from the block device (`read_bytes`). */
export async function ioCounters(pid: number): Promise<{ rchar: number; readBytes: number }> {
  const io = await fs.readFile(`/proc/${pid}/io`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
  return { rchar: field('rchar'), readBytes: field('read_bytes') };
}

/** POST …/upload/ as multipart, streamed from disk. */
export async function upload(baseUrl: string, invocationId: number, kind: string, file: string, filename: string): Promise<void> {
  const boundary = `----mm-bench-${randomBytes(6).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\n${kind}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = (await fs.stat(file)).size;
  await new Promise<void>((resolve, reject) => {
    const req = http.request(new URL(`/api/invocations/${invocationId}/upload/`, baseUrl), {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + tail.length },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`upload answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.write(head);
    const stream = createReadStream(file, { highWaterMark: MiB });
    stream.on('end', () => req.end(tail));
    stream.pipe(req, { end: false });
  });
}

export interface Sshd {
  port: number;
  key: string;
  proc: ChildProcess;
}

/** A throwaway sshd on a loopback port, root login by a fresh key (needs openssh-server). */
export async function startSshd(dir: string): Promise<Sshd> {
  await fs.mkdir('/run/sshd', { recursive: true });
  const hostKey = path.join(dir, 'host_ed25519');
  const key = path.join(dir, 'client_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const authorized = path.join(dir, 'authorized_keys');
  await fs.copyFile(`${key}.pub`, authorized);
  await fs.chmod(authorized, 0o600);
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  await fs.writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${authorized}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  const proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  await eventually(
    () =>
      new Promise<void>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.end();
          resolve();
        });
        s.on('error', reject);
      }),
    10_000,
  );
  return { port, key, proc };
}

/**
 * scp (default cipher) to (`push`) or from (`pull`) the sshd at `port` (the sshd's, or a
 * proxy's in front of it); `compress`: `scp -C` (zlib inside the SSH connection).
 */
export async function scp(sshd: Sshd, from: string, to: string, opts: { port?: number; direction?: 'push' | 'pull'; compress?: boolean } = {}): Promise<number> {
  const remote = (p: string) => `root@127.0.0.1:${p}`;
  const [src, dst] = opts.direction === 'pull' ? [remote(from), to] : [from, remote(to)];
  const t0 = performance.now();
  await run('scp', [
    '-q',
    ...(opts.compress ? ['-C'] : []),
    '-P',
    String(opts.port ?? sshd.port),
    '-i',
    sshd.key,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    src,
    dst,
  ]);
  return performance.now() - t0;
}

export const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : NaN);
export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
export const mbPerS = (bytes: number, ms: number) => (bytes / 1e6 / (ms / 1000)).toFixed(0);
export const megabytes = (b: number) => `${(b / 1e6).toFixed(0)} MB`;

const FREE_PAGE_HOLD = '/sys/module/page_reporting/parameters/min_free_ms';

/**
 * Keeps memory the kernel frees in this machine for `ms` before it is handed back to the host,
 * for the benchmark's run; returns what undoes it (also run at exit).
 *
 * Why: this VM (its balloon device's free page reporting) returns freed memory to its
 * host about 2 s after the kernel frees it, and the next write into such a page faults it
 * back in from the host. Measured with dd here: a 1 GiB buffered write took 0.24 s into pages
 * freed 0.5–1 s before and 1.55 s (all system time) into pages freed 2–3 s before. Whether a
 * timed step (product, floor or scp) wrote into held or returned pages was chance, 6× on the
 * largest part of its cost. A real board or server has no such cost. Where the knob is absent
 * or not writable (another kernel, not root) nothing changes and the reason is returned.
 */
export function holdFreedPages(ms: number): { held: boolean; undo: () => void; note: string } {
  let before: string;
  try {
    before = readFileSync(FREE_PAGE_HOLD, 'utf8').trim();
    writeFileSync(FREE_PAGE_HOLD, String(ms));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    return { held: false, undo: () => {}, note: `freed memory goes back to the host as this machine decides (${FREE_PAGE_HOLD}: ${why})` };
  }
  let undone = false;
  const undo = () => {
    if (undone) return;
    undone = true;
    try {
      writeFileSync(FREE_PAGE_HOLD, before);
    } catch {
      // best effort at exit
    }
  };
  process.once('exit', undo);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      undo();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  return { held: true, undo, note: `freed memory held ${ms / 1000} s before it goes back to the VM's host (min_free_ms ${before} → ${ms}, restored at exit)` };
}

/**
 * holdFreedPages for a benchmark's run: 5 minutes (the most this kernel accepts), unless the
 * command line says `--keep-page-reporting`. `note` says which, for the benchmark to print.
 */
export function holdFreedPagesForRun(): { held: boolean; undo: () => void; note: string } {
  if (process.argv.includes('--keep-page-reporting'))
    return { held: false, undo: () => {}, note: 'freed memory goes back to the host after ~2 s, as this VM does by default (--keep-page-reporting)' };
  return holdFreedPages(5 * 60_000);
}

/**
 * Writes `bytes` of page cache and frees it again (a scratch file in `dir`, unlinked unsynced,
 * so nothing reaches the disk), so that the next step's writes land in memory this machine
 * already holds. With holdFreedPages that memory stays in the guest; without it, only for ~2 s.
 * A fresh VM's memory has never been touched at all: the first gigabytes any step writes would
 * otherwise pay for that too.
 */
export async function warmFreePages(dir: string, bytes: number): Promise<void> {
  const file = path.join(dir, `warm-${process.pid}.bin`);
  const handle = await fs.open(file, 'w');
  try {
    const block = Buffer.alloc(8 * MiB, 1);
    for (let at = 0; at < bytes; at += block.length) await handle.write(block, 0, Math.min(block.length, bytes - at));
  } finally {
    await handle.close();
    await fs.rm(file, { force: true });
  }
}
