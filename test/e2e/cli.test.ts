/**
 * End to end for the `mm` client (issue 14): its bundle as a process against the real
 * control plane and a real `mm-agent --simulate`, through a TCP proxy the test controls
 * (byte counts, a slow link, cut connections).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../support/cli.ts';
import { asVideo } from '../support/fake-video.ts';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { freePort } from './device-scripts-support.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { startTestServer } from '../support/test-server.ts';
import { hasTmux, tmuxRun } from '../support/tmux.ts';
import { bytes } from '../../packages/cli/src/format.ts';

/** The kill-mid-upload file: 64 MiB keeps the suite fast here (the benchmark sends 1 GiB). */
const BIG = 64 * 1024 * 1024;
/** Each test runs whole `mm` processes against real ones: generous on a loaded 2-core machine. */
const HEAVY = 300_000;

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function writeRandomFile(file: string, size: number): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    const block = randomBytes(1024 * 1024);
    for (let at = 0, i = 0; at < size; at += block.length, i++) {
      block.writeUInt32BE(i, 0);
      await handle.write(block, 0, Math.min(block.length, size - at));
    }
  } finally {
    await handle.close();
  }
}

const isMp4 = (b: Buffer) => b.subarray(4, 8).toString('latin1') === 'ftyp' && b.includes(Buffer.from('moov'));

// One database (the real one where configured): what is end to end here does not depend on
// which PostgreSQL holds the rows; the integration files cover both (docs/testing.md).
describe.each(dbKinds.slice(-1))('the mm client, end to end (%s database)', (kind) => {
  let cluster: ServerCluster;
  let agent: AgentProcess;
  let proxy: TcpProxy;
  let cli: CliHome;
  let scratch: string;
  let files: { parameter: string; bitstream: string; weights: string; input: string };
  let env: Record<string, string>;

  const fileArgs = () => ['--parameter', files.parameter, '--bitstream', files.bitstream, '--weights', files.weights, '--input', files.input];

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-cli-'));
    cluster = await serverCluster(kind);
    const server = await cluster.start();
    const res = await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'cli-board' }) });
    const board = await json(res);
    // The simulated board's motor script on a port of its own, named in the catalogue (mm motor).
    const gpioPort = await freePort();
    agent = await startAgent({ serverUrl: server.url, token: board.token, agentDir: path.join(scratch, 'agent'), env: { MM_SIM_GPIO_PORT: String(gpioPort) } });
    await eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000);
    const gpio = (await json(await server.api('/api/device-scripts/?device_type=gpio'))).scripts[0];
    const patched = await server.api(`/api/device-scripts/${gpio.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: gpioPort }) });
    expect(patched.status).toBe(200);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: server.port });
    cli = await cliHome();
    env = { MM_SERVER_URL: proxy.url };
    files = {
      parameter: path.join(scratch, 'params.json'),
      bitstream: path.join(scratch, 'design.bit'),
      weights: path.join(scratch, 'model.bin'),
      input: path.join(scratch, 'input.mp4'),
    };
    await fs.writeFile(files.parameter, JSON.stringify({ duration_s: 0.2 }));
    await fs.writeFile(files.bitstream, randomBytes(200_000));
    await writeRandomFile(files.weights, 3 * 1024 * 1024);
    await fs.writeFile(files.input, asVideo(randomBytes(500_000)));
  }, 420_000);

  afterAll(async () => {
    await agent?.stop();
    await proxy?.close();
    await cluster?.cleanup();
    await cli?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('mm run with four files saves a playable, verified output video and exits 0; again, it uploads nothing', async () => {
    const out = path.join(scratch, 'out.mp4');
    const first = await cli.run(['run', '--name', 'four', ...fileArgs(), '-o', out, '--json'], env);
    expect(first.stderr).not.toMatch(/\n\s+at /); // no stack traces
    expect(first.code, first.stderr).toBe(0);
    const doc = JSON.parse(first.stdout);
    expect(doc.operation.status).toBe('succeeded');
    expect(doc.files.map((f: { kind: string; action: string }) => [f.kind, f.action]).sort()).toEqual([
      ['bitstream', 'uploaded'],
      ['input_video', 'uploaded'],
      ['parameter', 'uploaded'],
      ['weights', 'uploaded'],
    ]);
    const video = await fs.readFile(out);
    expect(isMp4(video)).toBe(true);
    expect(createHash('sha256').update(video).digest('hex')).toBe(doc.output.sha256);
    const inv = await json(await cluster.current().api(`/api/invocations/${doc.invocation_id}/`));
    expect(inv.files.weights.sha256).toBe(await sha256File(files.weights));
    await expect(fs.stat(`${out}.part`)).rejects.toThrow();

    // The same files again: hashes come from the cache, every file is attached by digest.
    const upBefore = proxy.up;
    const second = await cli.run(['run', '--name', 'four-again', ...fileArgs(), '-o', path.join(scratch, 'out2.mp4'), '--json'], env);
    expect(second.code, second.stderr).toBe(0);
    const again = JSON.parse(second.stdout);
    expect(again.files.every((f: { action: string; bytes_sent: number }) => f.action === 'attached' && f.bytes_sent === 0)).toBe(true);
    expect(proxy.up - upBefore).toBeLessThan(100_000); // requests only, no file bytes
  }, HEAVY);

  it('a run whose runner exits 3 exits 1 and shows the log', async () => {
    const param = path.join(scratch, 'fail.json');
    await fs.writeFile(param, JSON.stringify({ exit_code: 3 }));
    const r = await cli.run(['run', '--name', 'fails', '--parameter', param], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/simulated failure: exiting with status 3/); // the runner's live log
    expect(r.stderr).toMatch(/^mm: The run failed \(operation \d+/m);
    expect(r.stderr).toMatch(/mm ops logs \d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, HEAVY);

  it('killed mid-upload of a large file, the same mm run continues (re-sending under 10 %) and the server has the right file', async () => {
    const big = path.join(scratch, 'big.bin');
    await writeRandomFile(big, BIG);
    const bigSha = await sha256File(big);
    const args = ['run', '--name', 'big', '--weights', big, '-o', path.join(scratch, 'big-out.mp4'), '--json'];
    // First run over a slow link; killed (SIGKILL: no chance to clean up) a third of the way in.
    proxy.rules = { upstreamRate: 24 * 1024 * 1024 };
    const upBefore = proxy.up;
    const first = cli.start(args, env);
    await eventually(async () => expect(proxy.up - upBefore).toBeGreaterThan(BIG / 3), 60_000, 50);
    first.kill('SIGKILL');
    await first.done;
    proxy.rules = {};
    const second = await cli.run(args, env);
    expect(second.code, second.stderr).toBe(0);
    const doc = JSON.parse(second.stdout);
    const weights = doc.files.find((f: { kind: string }) => f.kind === 'weights');
    expect(weights.action).toBe('uploaded');
    expect(weights.resumed_from).toBeGreaterThan(BIG / 4);
    const sentInAll = proxy.up - upBefore;
    expect(sentInAll - BIG).toBeLessThan(BIG / 10);
    const inv = await json(await cluster.current().api(`/api/invocations/${doc.invocation_id}/`));
    expect(inv.files.weights).toMatchObject({ sha256: bigSha, size: BIG });
  }, HEAVY);

  it('survives a connection cut during the upload and during the output download', async () => {
    const weights = path.join(scratch, 'cut.bin');
    await writeRandomFile(weights, 8 * 1024 * 1024);
    proxy.rules = { cutUpstreamAfter: 3 * 1024 * 1024 };
    const out = path.join(scratch, 'cut-out.mp4');
    const cutsBefore = proxy.cuts;
    const r = await cli.run(['run', '--name', 'cut', '--weights', weights, '-o', out, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.cuts).toBe(cutsBefore + 1);
    const doc = JSON.parse(r.stdout);
    const inv = await json(await cluster.current().api(`/api/invocations/${doc.invocation_id}/`));
    expect(inv.files.weights.sha256).toBe(await sha256File(weights));

    // The download: cut once the video is partly through (responses only carry the video then).
    const size = inv.files.output_video.size as number;
    proxy.rules = { cutDownstreamAfter: Math.floor(size / 2) };
    const again = await cli.run(['run', '--name', 'cut', '--weights', weights, '-o', path.join(scratch, 'cut-out2.mp4')], env);
    expect(again.code, again.stderr).toBe(0);
    expect(proxy.cuts).toBe(cutsBefore + 2);
    expect(again.stderr).toMatch(/download: connection lost .*continuing at \d+ bytes/);
    const id2 = Number(/Invocation (\d+), operation/.exec(again.stdout)![1]);
    const inv2 = await json(await cluster.current().api(`/api/invocations/${id2}/`));
    const video = await fs.readFile(path.join(scratch, 'cut-out2.mp4'));
    expect(createHash('sha256').update(video).digest('hex')).toBe(inv2.files.output_video.sha256);
    proxy.rules = {};
  }, HEAVY);

  it('Ctrl-C while following detaches without cancelling and says how to follow again (exit 130)', async () => {
    const param = path.join(scratch, 'slow.json');
    await fs.writeFile(param, JSON.stringify({ duration_s: 4 }));
    const p = cli.start(['run', '--name', 'slow', '--parameter', param], env);
    await p.waitFor(({ stderr }) => /running invocation \d+ as operation \d+/.test(stderr));
    p.kill('SIGINT');
    const r = await p.done;
    expect(r.code).toBe(130);
    const opId = Number(/operation (\d+)/.exec(r.stderr.split('running invocation')[1]!)![1]);
    expect(r.stderr).toContain(`mm ops logs ${opId} -f`);
    const op = await json(await cluster.current().api(`/api/operations/${opId}/`));
    expect(['queued', 'running', 'succeeded']).toContain(op.status);
    // Following it again ends with the run's end.
    const follow = await cli.run(['ops', 'logs', String(opId), '-f'], env);
    expect(follow.code, follow.stderr).toBe(0);
    expect(follow.stdout).toMatch(/rendering output\.mp4/);
  }, HEAVY);

  it('prints JSON that parses for reading commands, and help for each command', async () => {
    for (const args of [['invocations', 'ls'], ['boards', 'ls'], ['ops', 'ls'], ['scripts', 'ls']]) {
      const r = await cli.run([...args, '--json'], env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(() => JSON.parse(r.stdout)).not.toThrow();
    }
    const ls = JSON.parse((await cli.run(['invocations', 'ls', '--search', 'four', '--json'], env)).stdout);
    expect(ls.invocations.map((i: { name: string }) => i.name)).toContain('four');
    for (const args of [['run'], ['login'], ['upload'], ['invocations', 'ls'], ['ops', 'logs'], ['pac', 'install'], ['motor'], ['events']]) {
      const r = await cli.run([...args, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: mm /);
    }
  }, HEAVY);

  it('mm motor drives for --for seconds (the script holds the command that long), and refuses a bad --for', async () => {
    const r = await cli.run(['motor', 'forward', '--for', '2', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ hold_ms: 2000 });
    expect((await cli.run(['motor', 'stop', '--json'], env)).code).toBe(0);
    expect((await cli.run(['motor', 'forward', '--for', '61'], env)).code).toBe(2);
    expect((await cli.run(['motor', 'stop', '--for', '1'], env)).code).toBe(2);
  }, HEAVY);

  it('mm upload sends one file resumably, and attaches it by digest when the server holds it', async () => {
    const inv = await json(
      await cluster.current().api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'up', description: '' }) }),
    );
    const r = JSON.parse((await cli.run(['upload', String(inv.id), 'bitstream', files.bitstream, '--json'], env)).stdout);
    expect(r).toMatchObject({ kind: 'bitstream', action: 'attached' }); // sent by the first test
    const fresh = path.join(scratch, 'fresh.bit');
    await fs.writeFile(fresh, randomBytes(10_000));
    const r2 = JSON.parse((await cli.run(['upload', String(inv.id), 'bitstream', fresh, '--json'], env)).stdout);
    expect(r2).toMatchObject({ kind: 'bitstream', action: 'uploaded', bytes_sent: 10_000 });
  }, HEAVY);

  it('--board takes a name or an id; a wrong or offline board is refused before anything is created', async () => {
    const server = cluster.current();
    const param = path.join(scratch, 'board-choice.json');
    await fs.writeFile(param, JSON.stringify({ duration_s: 0 }));
    const count = async () => (await json(await server.api('/api/invocations/?limit=1'))).total as number;
    const before = await count();

    const wrong = await cli.run(['run', '--name', 'wrong-board', '--parameter', param, '--board', 'no-such-board'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/No board is named "no-such-board" \(the boards are cli-board/);
    // Another board, never connected: offline, so a run there cannot start.
    const idle = await json(await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'idle-board' }) }));
    try {
      const offline = await cli.run(['run', '--name', 'offline-board', '--parameter', param, '--board', 'idle-board'], env);
      expect(offline.code).toBe(3);
      expect(offline.stderr).toMatch(/Board idle-board .* is offline/);
      const several = await cli.run(['run', '--name', 'which-board', '--parameter', param], env);
      expect(several.code).toBe(2);
      expect(several.stderr).toMatch(/Several boards are registered/);
      expect(await count()).toBe(before);

      const byName = await cli.run(['run', '--name', 'by-name', '--parameter', param, '--board', 'cli-board', '--json', '-o', path.join(scratch, 'by-name.mp4')], env);
      expect(byName.code, byName.stderr).toBe(0);
      const boardId = JSON.parse(byName.stdout).operation.board_id as string;
      const byId = await cli.run(['run', '--name', 'by-id', '--parameter', param, '--board', boardId, '--detach', '--json'], env);
      expect(byId.code, byId.stderr).toBe(0);
      expect(JSON.parse(byId.stdout).operation.board_id).toBe(boardId);
      expect(await count()).toBe(before + 2);
      const ops = await cli.run(['ops', 'ls', '--board', 'cli-board', '--json'], env);
      expect(JSON.parse(ops.stdout).operations.every((o: { board_id: string }) => o.board_id === boardId)).toBe(true);
    } finally {
      await server.api(`/api/boards/${idle.id}/`, { method: 'DELETE' });
    }
  }, HEAVY);

  it('pac activate of a PAC the board lacks fails without announcing a reboot; motor, servo and events print words (JSON with --json)', async () => {
    const pac = await cli.run(['pac', 'activate', 'no-such-pac'], env);
    expect(pac.code).toBe(1);
    expect(pac.stderr).toMatch(/no PAC configuration named "no-such-pac"/);
    expect(pac.stderr).not.toMatch(/reboot/i);

    const events = cli.start(['events', '--board', 'cli-board'], env);
    await events.waitFor(({ stdout }) => /\d\d:\d\d:\d\d {2}now +(stopped|driving)/.test(stdout));
    const drive = await cli.run(['motor', 'forward', '--for', '1'], env);
    expect(drive.code, drive.stderr).toBe(0);
    expect(drive.stdout).toMatch(/^Motor driving forward \(left wheels forward, right wheels forward\), for 1 s unless renewed; steering at \d+°\.$/m);
    const servo = await cli.run(['servo', '45'], env);
    expect(servo.stdout).toMatch(/^Motor .*; steering at 45°\.$/m);
    await events.waitFor(({ stdout }) => /motor +driving forward/.test(stdout) && /servo +.*steering at 45°/.test(stdout) && /hold ran out +stopped/.test(stdout), 30_000);
    expect(events.stdout()).not.toMatch(/[{}]/);
    events.kill('SIGINT');
    expect((await events.done).code).toBe(130);
    const asJson = await cli.run(['servo', '90', '--json'], env);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ servo: { angle: 90 } });
  }, HEAVY);

  it.skipIf(!hasTmux)('on a terminal: bars say the time left as a time, end with the size (no `done 0`), the ZIP bar ends with its real size; plain lines say the size', async () => {
    const big = path.join(scratch, 'bars.bin');
    await writeRandomFile(big, 24 * 1024 * 1024);
    const out = path.join(scratch, 'bars.mp4');
    const screens: string[] = [];
    proxy.rules = { upstreamRate: 6 * 1024 * 1024 };
    const term = tmuxRun([process.execPath, cli.bundle, 'run', '--name', 'bars', '--weights', big, '-o', out], { env: { ...cli.env, ...env }, cwd: scratch });
    try {
      screens.push(await term.waitFor((s) => /uploading weights .*\d+ s left/.test(s), 120_000));
      proxy.rules = {};
      const end = await term.waitFor((s) => /\[exit \d+\]/.test(s), 180_000);
      screens.push(end);
      expect(end).toContain('[exit 0]');
      expect(end).toMatch(/^hashing weights .* 100% 24\.0 MiB$/m);
      expect(end).toMatch(/^uploading weights .* 100% 24\.0 MiB$/m);
      expect(end).toMatch(/^downloading output .* 100% [\d.]+ (B|KiB|MiB)$/m);
      expect(end).not.toMatch(/done 0|cached 0|\d+s left/);
    } finally {
      proxy.rules = {};
      term.close();
    }
    const id = Number(/Invocation (\d+), operation/.exec(screens.at(-1)!)![1]);
    const zip = path.join(scratch, 'bars.zip');
    const zipTerm = tmuxRun([process.execPath, cli.bundle, 'invocations', 'download', String(id), '-o', zip], { env: { ...cli.env, ...env }, cwd: scratch });
    try {
      const end = await zipTerm.waitFor((s) => /\[exit \d+\]/.test(s), 120_000);
      screens.push(end);
      expect(end).toContain('[exit 0]');
      const real = bytes((await fs.stat(zip)).size);
      expect(end).toMatch(new RegExp(`^downloading zip .* 100% ${real.replace('.', '\\.')}$`, 'm'));
    } finally {
      zipTerm.close();
    }
    if (process.env.MM_TEST_SCREENS) await fs.writeFile(process.env.MM_TEST_SCREENS, screens.join('\n\n=====\n\n'));

    // Not a terminal: plain lines, each with the size.
    const plain = await cli.run(['run', '--name', 'bars-plain', '--weights', big, '-o', path.join(scratch, 'bars2.mp4')], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/^hashing weights: 24\.0 MiB, cached$/m);
    expect(plain.stderr).toMatch(/^downloading output: [\d.]+ (B|KiB|MiB) in [\d.]+ s \(/m);
  }, HEAVY);

  it('exit codes: 2 usage, 3 unreachable, 4 not authenticated', async () => {
    expect((await cli.run(['run', '--weights'], env)).code).toBe(2);
    expect((await cli.run(['no-such-command'], env)).code).toBe(2);
    expect((await cli.run(['invocations', 'show', 'abc'], env)).code).toBe(2);
    const missing = await cli.run(['run', '--weights', path.join(scratch, 'nope.bin')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);

    const down = await cli.run(['invocations', 'ls'], { MM_SERVER_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/Cannot reach the server at http:\/\/127\.0\.0\.1:1/);
    const downJson = await cli.run(['invocations', 'ls', '--json'], { MM_SERVER_URL: 'http://127.0.0.1:1' });
    expect(JSON.parse(downJson.stdout).error.exit_code).toBe(3);
  }, HEAVY);
});

describe('the mm client without a board, and with auth (embedded database)', () => {
  let cli: CliHome;
  beforeAll(async () => {
    cli = await cliHome();
  });
  afterAll(async () => {
    await cli?.cleanup();
  });

  it('exit 3 when no board is registered; 4 with a wrong token; login --token saves a 0600 config', async () => {
    const server = await startTestServer('embedded', { MM_API_TOKEN: 'right-token' });
    try {
      const param = path.join(cli.dir, 'p.json');
      await fs.writeFile(param, '{}');
      const wrong = await cli.run(['invocations', 'ls'], { MM_SERVER_URL: server.url, MM_API_TOKEN: 'wrong' });
      expect(wrong.code).toBe(4);
      expect(wrong.stderr).toMatch(/mm login/);
      expect((await cli.run(['login', '--server', server.url, '--token', 'wrong'])).code).toBe(4);

      const login = await cli.run(['login', '--server', server.url, '--token', 'right-token']);
      expect(login.code, login.stderr).toBe(0);
      const file = path.join(cli.env.XDG_CONFIG_HOME!, 'model-manager', 'config.json');
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual({ server: server.url, token: 'right-token' });

      // The saved login is used; --token overrides it.
      const noBoard = await cli.run(['run', '--name', 'x', '--parameter', param]);
      expect(noBoard.code).toBe(3);
      expect(noBoard.stderr).toMatch(/mm boards add/);
      expect((await cli.run(['boards', 'ls', '--token', 'wrong'])).code).toBe(4);
    } finally {
      await server.stop();
    }
  }, HEAVY);

  it('login --username logs in, creates a personal token on that session and saves it; a wrong password is exit 4', async () => {
    const server = await startTestServer('embedded', { MM_API_TOKEN: 'admin-token' });
    try {
      const made = await fetch(`${server.url}/api/users/`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'carol', password: 'carol-secret-password', role: 'operator' }),
      });
      expect(made.status).toBe(201);

      const wrong = await cli.run(['login', '--server', server.url, '--username', 'carol'], { MM_PASSWORD: 'not-her-password' });
      expect(wrong.code).toBe(4);
      expect(wrong.stderr).not.toMatch(/\n\s+at /);

      const login = await cli.run(['login', '--server', server.url, '--username', 'carol'], { MM_PASSWORD: 'carol-secret-password' });
      expect(login.code, login.stderr).toBe(0);
      const file = path.join(cli.env.XDG_CONFIG_HOME!, 'model-manager', 'config.json');
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      const saved = JSON.parse(await fs.readFile(file, 'utf8')) as { server: string; token: string };
      expect(saved.server).toBe(server.url);
      expect(saved.token).toMatch(/^mmu_/);

      // The saved personal token is carol's: it works, and the server lists it as hers.
      const ls = await cli.run(['invocations', 'ls', '--json']);
      expect(ls.code, ls.stderr).toBe(0);
      const mine = await fetch(`${server.url}/api/auth/me/`, { headers: { authorization: `Bearer ${saved.token}` } });
      expect(((await mine.json()) as { user: { username: string } }).user.username).toBe('carol');
    } finally {
      await server.stop();
    }
  }, HEAVY);
});
