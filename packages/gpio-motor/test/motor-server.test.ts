import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import {
  ALL_LINES,
  createSimulatedSysfs,
  type MotorServer,
  type SimulatedSysfs,
  SERVO_LINES,
  startMotorServer,
} from '../src/index.ts';
import { openSse } from './sse-reader.ts';

/** Expected motor lines per command, written out by hand from the documented H-bridge table. */
const expectedMotorLines: Record<string, Record<number, 0 | 1>> = {
  //            left: Q1=516 Q2=518 Q3=520 Q4=522      right: Q1=517 Q2=519 Q3=521 Q4=523
  forward: { 516: 1, 518: 0, 520: 0, 522: 1, 517: 1, 519: 0, 521: 0, 523: 1 },
  backward: { 516: 0, 518: 1, 520: 1, 522: 0, 517: 0, 519: 1, 521: 1, 523: 0 },
  left: { 516: 0, 518: 1, 520: 1, 522: 0, 517: 1, 519: 0, 521: 0, 523: 1 },
  right: { 516: 1, 518: 0, 520: 0, 522: 1, 517: 0, 519: 1, 521: 1, 523: 0 },
  stop: { 516: 0, 518: 0, 520: 0, 522: 0, 517: 0, 519: 0, 521: 0, 523: 0 },
};

async function motorFiles(sysfs: SimulatedSysfs): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const line of Object.keys(expectedMotorLines.stop!).map(Number)) out[line] = await sysfs.value(line);
  return out;
}

/** The servo's 8-bit value as the line files hold it (524 = bit 0). */
async function servoFromFiles(sysfs: SimulatedSysfs): Promise<number> {
  let value = 0;
  for (const [bit, line] of SERVO_LINES.entries()) value |= (await sysfs.value(line)) << bit;
  return value;
}

describe('GPIO motor script on a simulated sysfs folder', () => {
  let root: string;
  let sysfs: SimulatedSysfs;
  let server: MotorServer;
  const post = (p: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body }) });

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-'));
    server = await startMotorServer({ port: 0, gpioRoot: root, simulated: true, heartbeatMs: 200 });
    sysfs = await createSimulatedSysfs(root);
  });
  afterEach(async () => {
    await server?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('exports every line as an output: motors stopped, servo centred (90° → 128)', async () => {
    for (const line of ALL_LINES) {
      expect(await sysfs.exported(line)).toBe(true);
      expect(await sysfs.direction(line)).toBe('out');
    }
    expect(ALL_LINES).toHaveLength(16);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
    expect(await servoFromFiles(sysfs)).toBe(128);
    expect((await fs.readFile(path.join(root, 'export'), 'utf8')).trim().split('\n').map(Number).sort()).toEqual([...ALL_LINES].sort());
    const state = await json(await fetch(`${server.url}/state`));
    expect(state).toMatchObject({ motion: 'stop', motors: { left: 'coast', right: 'coast' }, servo: { angle: 90, value: 128 } });
  });

  it.each(['forward', 'backward', 'left', 'right', 'stop'])('POST /motor/%s sets the bridge lines', async (motion) => {
    // Start from a different motion so every command has to change lines.
    await post(motion === 'forward' ? '/motor/backward' : '/motor/forward');
    const res = await post(`/motor/${motion}`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.motion).toBe(motion);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines[motion]);
    for (const [line, value] of Object.entries(expectedMotorLines[motion]!)) expect(body.lines[line]).toBe(value);
    // Motion commands leave the servo alone.
    expect(await servoFromFiles(sysfs)).toBe(128);
  });

  it('reports what each motor does', async () => {
    const drives = async (m: string) => (await json(await post(`/motor/${m}`))).motors;
    expect(await drives('forward')).toEqual({ left: 'forward', right: 'forward' });
    expect(await drives('backward')).toEqual({ left: 'backward', right: 'backward' });
    expect(await drives('left')).toEqual({ left: 'backward', right: 'forward' });
    expect(await drives('right')).toEqual({ left: 'forward', right: 'backward' });
    expect(await drives('stop')).toEqual({ left: 'coast', right: 'coast' });
  });

  it.each([
    [0, 0],
    [90, 128],
    [180, 255],
    [1, 1], // 1.4167 rounds down
    [45, 64], // 63.75 rounds up
    [179, 254], // 253.58
    [0.3, 0], // 0.425
    [12.5, 18], // 17.71
  ])('POST /servo {angle: %s} puts %s on lines 524–531', async (angle, value) => {
    const res = await post('/servo', JSON.stringify({ angle }));
    expect(res.status).toBe(200);
    expect((await json(res)).servo).toEqual({ angle, value });
    expect(await servoFromFiles(sysfs)).toBe(value);
    // Bit by bit, 524 the least significant.
    for (const [bit, line] of SERVO_LINES.entries()) expect(await sysfs.value(line)).toBe((value >> bit) & 1);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
  });

  it.each([
    ['angle -1', JSON.stringify({ angle: -1 }), 'validation_failed'],
    ['angle 181', JSON.stringify({ angle: 181 }), 'validation_failed'],
    ['angle "90" (a string)', JSON.stringify({ angle: '90' }), 'validation_failed'],
    ['angle null', JSON.stringify({ angle: null }), 'validation_failed'],
    ['no angle', JSON.stringify({}), 'validation_failed'],
    ['an unknown field', JSON.stringify({ angle: 90, speed: 3 }), 'validation_failed'],
    ['an array', JSON.stringify([90]), 'validation_failed'],
    ['not JSON', '{angle: 90', 'malformed_json'],
    ['an empty body', '', 'malformed_json'],
  ])('refuses %s with a 400 and leaves the lines alone', async (_what, body, code) => {
    await post('/servo', JSON.stringify({ angle: 30 }));
    const res = await post('/servo', body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = await json(res);
    expect(problem).toMatchObject({ status: 400, code });
    if (code === 'validation_failed') expect(problem.errors.length).toBeGreaterThan(0);
    expect(await servoFromFiles(sysfs)).toBe(43); // 30° → 42.5 → 43
  });

  it('refuses an oversized body with a 413', async () => {
    const res = await post('/servo', JSON.stringify({ angle: 10, pad: 'x'.repeat(10_000) }));
    expect(res.status).toBe(413);
    expect((await json(res)).code).toBe('payload_too_large');
  });

  it('answers unknown routes 404 and wrong methods 405 with Allow', async () => {
    const unknown = await post('/motor/sideways');
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe('route_not_found');
    expect((await fetch(`${server.url}/`)).status).toBe(404);

    const getMotor = await fetch(`${server.url}/motor/forward`);
    expect(getMotor.status).toBe(405);
    expect(getMotor.headers.get('allow')).toBe('POST');
    expect((await json(getMotor)).code).toBe('method_not_allowed');
    const postStream = await post('/stream');
    expect(postStream.status).toBe(405);
    expect(postStream.headers.get('allow')).toBe('GET');
    expect((await fetch(`${server.url}/servo`, { method: 'PUT', body: '{"angle":1}' })).status).toBe(405);
    // Nothing moved.
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
  });

  it('accepts a trailing slash and ignores any payload on motor commands', async () => {
    const res = await post('/motor/forward/', 'ignored', { 'content-type': 'text/plain' });
    expect(res.status).toBe(200);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.forward);
  });

  it('streams a snapshot on connect, then an event with the next id on every change', async () => {
    const stream = await openSse(`${server.url}/stream`);
    try {
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const snapshot = await stream.nextEvent();
      expect(snapshot.event).toBe('state');
      expect(JSON.parse(snapshot.data)).toMatchObject({ cause: 'connect', motion: 'stop' });

      const answer = await json(await post('/motor/forward'));
      const moved = await stream.nextEvent();
      expect(Number(moved.id)).toBe(Number(snapshot.id) + 1);
      expect(answer.event_id).toBe(Number(moved.id));
      const data = JSON.parse(moved.data);
      expect(data).toMatchObject({ cause: 'motor', motion: 'forward', motors: { left: 'forward', right: 'forward' } });
      expect(data.lines['516']).toBe(1);

      await post('/servo', JSON.stringify({ angle: 180 }));
      const steered = await stream.nextEvent();
      expect(Number(steered.id)).toBe(Number(moved.id) + 1);
      expect(JSON.parse(steered.data)).toMatchObject({ cause: 'servo', servo: { angle: 180, value: 255 } });
      expect(JSON.parse(steered.data).lines['531']).toBe(1);

      // A refused command changes nothing and sends nothing; the next change still gets the next id.
      await post('/servo', JSON.stringify({ angle: 500 }));
      await post('/motor/stop');
      const stopped = await stream.nextEvent();
      expect(Number(stopped.id)).toBe(Number(steered.id) + 1);
      expect(JSON.parse(stopped.data)).toMatchObject({ cause: 'motor', motion: 'stop' });
    } finally {
      stream.close();
    }
  });

  it('sends every client the same events', async () => {
    const a = await openSse(`${server.url}/stream`);
    const b = await openSse(`${server.url}/stream`);
    try {
      await a.nextEvent();
      await b.nextEvent();
      await post('/motor/left');
      const [ea, eb] = [await a.nextEvent(), await b.nextEvent()];
      expect(ea).toEqual(eb);
      expect(JSON.parse(ea.data).motion).toBe('left');
    } finally {
      a.close();
      b.close();
    }
  });

  it('counts its open /stream connections in /state', async () => {
    const clients = async () => (await json(await fetch(`${server.url}/state`))).stream_clients;
    expect(await clients()).toBe(0);
    const a = await openSse(`${server.url}/stream`);
    const b = await openSse(`${server.url}/stream`);
    await a.nextEvent();
    await b.nextEvent();
    expect(await clients()).toBe(2);
    a.close();
    // The server notices the disconnect on its own schedule: wait for it rather than time it.
    while ((await clients()) !== 1) await new Promise((resolve) => setTimeout(resolve, 20));
    b.close();
    while ((await clients()) !== 0) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it('continues the ids of a Last-Event-ID from an earlier run', async () => {
    const stream = await openSse(`${server.url}/stream`, { 'last-event-id': '1000' });
    try {
      expect((await stream.nextEvent()).id).toBe('1000');
      await post('/motor/right');
      expect((await stream.nextEvent()).id).toBe('1001');
      expect((await json(await fetch(`${server.url}/state`))).event_id).toBe(1001);
    } finally {
      stream.close();
    }
  });

  it('sends a heartbeat comment while idle', async () => {
    const stream = await openSse(`${server.url}/stream`);
    try {
      let block = await stream.next();
      while (block.comment === undefined) block = await stream.next();
      expect(block.comment).toMatch(/^heartbeat/);
    } finally {
      stream.close();
    }
  });

  it('holds a motion until the next command when no dead-man hold is set', async () => {
    expect((await json(await post('/motor/forward'))).hold_ms).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.forward);
  });

  it('refuses a hold_ms outside 50–60000 ms, changing nothing', async () => {
    for (const bad of ['0', '49', '60001', 'abc', '1.5', '-1']) {
      const res = await post(`/motor/forward?hold_ms=${bad}`);
      expect(res.status, bad).toBe(400);
      const body = await json(res);
      expect(body.code).toBe('validation_failed');
      expect(body.errors[0].field).toBe('hold_ms');
    }
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
  });

  it('stops the motors and ends the streams when closed', async () => {
    await post('/motor/forward');
    await post('/servo', JSON.stringify({ angle: 20 }));
    const stream = await openSse(`${server.url}/stream`);
    await stream.nextEvent();
    await server.close();
    await expect(stream.nextEvent()).rejects.toThrow();
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
    expect(await servoFromFiles(sysfs)).toBe(28); // the servo keeps its position
  });
});

describe('GPIO motor script on an unwritable GPIO root', () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-bad-'));
  });
  afterAll(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('fails to start with the sysfs error when the lines cannot be exported', async () => {
    // Not simulated and no sysfs there: exporting must fail rather than pretend.
    await expect(startMotorServer({ port: 0, gpioRoot: path.join(root, 'missing') })).rejects.toThrow(/ENOENT/);
  });
});

describe('the dead-man hold: a drive command stops by itself unless renewed', () => {
  // Long enough that a loaded machine still renews in time (the renewals come every 100 ms).
  const HOLD_MS = 1000;
  let root: string;
  let sysfs: SimulatedSysfs;
  let server: MotorServer;
  const post = (p: string) => fetch(`${server.url}${p}`, { method: 'POST' });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-deadman-'));
    server = await startMotorServer({ port: 0, gpioRoot: root, simulated: true, driveTimeoutMs: HOLD_MS });
    sysfs = await createSimulatedSysfs(root);
  });
  afterEach(async () => {
    await server?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('stops the motors after the hold with a timeout event when no stop and no renewal arrive', async () => {
    const stream = await openSse(`${server.url}/stream`);
    try {
      await stream.nextEvent();
      const t0 = Date.now();
      const answer = await json(await post('/motor/forward'));
      expect(answer).toMatchObject({ motion: 'forward', hold_ms: HOLD_MS });
      expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.forward);
      expect(JSON.parse((await stream.nextEvent()).data)).toMatchObject({ cause: 'motor', motion: 'forward' });
      const stopped = await stream.nextEvent();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(HOLD_MS - 20);
      expect(JSON.parse(stopped.data)).toMatchObject({ cause: 'timeout', motion: 'stop', motors: { left: 'coast', right: 'coast' } });
      expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
    } finally {
      stream.close();
    }
  });

  it('keeps driving while the same command is renewed, without an event per renewal, and stops once renewals end', async () => {
    const stream = await openSse(`${server.url}/stream`);
    try {
      await stream.nextEvent();
      await post('/motor/left');
      const moved = await stream.nextEvent();
      // Renew every 100 ms for two and a half holds' time: the motors never stop meanwhile.
      const until = Date.now() + 2.5 * HOLD_MS;
      while (Date.now() < until) {
        const renewed = await json(await post('/motor/left'));
        expect(renewed).toMatchObject({ motion: 'left', hold_ms: HOLD_MS, event_id: Number(moved.id) });
        expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.left);
        await sleep(100);
      }
      const next = await stream.nextEvent();
      expect(Number(next.id)).toBe(Number(moved.id) + 1);
      expect(JSON.parse(next.data)).toMatchObject({ cause: 'timeout', motion: 'stop' });
      expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
    } finally {
      stream.close();
    }
  });

  it('a stop or another motion replaces the hold: an old hold never stops a newer command', async () => {
    await post('/motor/forward');
    await post('/motor/stop');
    await post('/servo'); // refused (no body): touches nothing
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
    // A long hold asked for by the command itself outlives the script's default.
    await post(`/motor/backward?hold_ms=${HOLD_MS * 4}`);
    await sleep(HOLD_MS * 2);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.backward);
    expect((await json(await fetch(`${server.url}/state`))).motion).toBe('backward');
    // The timer that follows this right turn is the one that counts, not backward's.
    await post('/motor/right');
    await sleep(HOLD_MS / 2);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.right);
    await eventuallyStopped(server.url);
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
  });

  it('a hold never fires after the script closed', async () => {
    await post('/motor/forward');
    await server.close();
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
    await sleep(HOLD_MS * 2); // no write into a closed script's lines, no unhandled error
    expect(await motorFiles(sysfs)).toEqual(expectedMotorLines.stop);
  });
});

/** Polls /state (set once the writes are done: a line file read mid-write is empty). */
async function eventuallyStopped(url: string): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    if ((await json(await fetch(`${url}/state`))).motion === 'stop') return;
    if (Date.now() > deadline) throw new Error('the motors did not stop');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
