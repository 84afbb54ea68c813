import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMotorServer, type HoldTimers, type MotorServer } from '../src/motor-server.ts';

/** A clock that moves only when the test says: the hold's timers fire at exact times. */
class FakeTimers implements HoldTimers {
  now = 0;
  private next = 1;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.due.set(id, { at: this.now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  /** Moves the clock on by `ms`, firing what falls due on the way, in order. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const [id, t] = [...this.due].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0] ?? [];
      if (id === undefined || !t) break;
      this.due.delete(id);
      this.now = t.at;
      t.fn();
    }
    this.now = until;
  }
  get pending(): number {
    return this.due.size;
  }
}

describe('the dead-man stop on a fake clock (MM_GPIO_DRIVE_TIMEOUT_MS, ?hold_ms=)', () => {
  let root: string;
  let server: MotorServer;
  let clock: FakeTimers;
  const post = async (p: string) => (await (await fetch(`${server.url}${p}`, { method: 'POST' })).json()) as { motion: string; hold_ms: number };
  const motion = async () => ((await (await fetch(`${server.url}/state`)).json()) as { motion: string }).motion;
  /** The stop the hold makes is written to the lines asynchronously: wait for it to land. */
  const settled = async (want: string) => {
    for (let i = 0; i < 100 && (await motion()) !== want; i++) await new Promise((r) => setTimeout(r, 10));
    return motion();
  };

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-fakeclock-'));
    clock = new FakeTimers();
    server = await startMotorServer({ port: 0, gpioRoot: root, simulated: true, driveTimeoutMs: 1000, timers: clock });
  });
  afterEach(async () => {
    await server?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('stops the motors exactly when the set time passes with no command', async () => {
    expect((await post('/motor/forward')).hold_ms).toBe(1000);
    clock.advance(999);
    expect(await motion()).toBe('forward');
    clock.advance(1);
    expect(await settled('stop')).toBe('stop');
    expect(clock.pending).toBe(0);
  });

  it('keeps moving while keep-alive commands (the same command again) arrive in time', async () => {
    await post('/motor/left?hold_ms=500');
    for (let i = 0; i < 10; i++) {
      clock.advance(400);
      expect(await motion()).toBe('left');
      expect((await post('/motor/left?hold_ms=500')).hold_ms).toBe(500);
    }
    clock.advance(499);
    expect(await motion()).toBe('left');
    clock.advance(1);
    expect(await settled('stop')).toBe('stop');
  });

  it('a stop, or a newer command, disarms the old hold', async () => {
    await post('/motor/forward');
    await post('/motor/stop');
    expect(clock.pending).toBe(0);
    await post('/motor/backward?hold_ms=2000');
    clock.advance(1500); // past the setting's 1000 ms: the command's own hold counts
    expect(await motion()).toBe('backward');
    clock.advance(500);
    expect(await settled('stop')).toBe('stop');
  });
});
