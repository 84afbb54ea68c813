import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MotorController } from '../src/motor-controller.ts';
import { createSimulatedSysfs, SysfsGpio } from '../src/sysfs-gpio.ts';
import { type Bit, LEFT_MOTOR_LINES, MOTION_TABLE, MOTIONS, RIGHT_MOTOR_LINES, shootsThrough } from '../src/wiring.ts';

/** A real sysfs driver on a real folder that also keeps the order of its value writes. */
class RecordingGpio extends SysfsGpio {
  writes: Array<[number, Bit]> = [];
  override async write(line: number, value: Bit): Promise<void> {
    await super.write(line, value);
    this.writes.push([line, value]);
  }
}

describe('H-bridge motion table', () => {
  it('never switches on both switches of one bridge leg', () => {
    for (const motion of MOTIONS) {
      expect(shootsThrough(MOTION_TABLE[motion].left)).toBe(false);
      expect(shootsThrough(MOTION_TABLE[motion].right)).toBe(false);
    }
    expect(shootsThrough([1, 1, 0, 0])).toBe(true);
    expect(shootsThrough([0, 0, 1, 1])).toBe(true);
  });

  it('has exactly the five commands', () => {
    expect(Object.keys(MOTION_TABLE).sort()).toEqual(['backward', 'forward', 'left', 'right', 'stop']);
  });
});

describe('motor controller on a simulated sysfs folder', () => {
  let root: string;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-hb-'));
    await createSimulatedSysfs(root);
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('switches lines off before it switches others on, so no moment shorts a leg', async () => {
    const gpio = new RecordingGpio({ root, simulated: true });
    const controller = await MotorController.create(gpio);
    for (const [from, to] of [
      ['forward', 'backward'],
      ['backward', 'forward'],
      ['left', 'right'],
      ['right', 'left'],
    ] as const) {
      await controller.setMotion(from);
      gpio.writes = [];
      await controller.setMotion(to);
      // Replay the writes from the `from` state and check every intermediate state.
      const lines = new Map<number, Bit>();
      for (const [i, line] of LEFT_MOTOR_LINES.entries()) lines.set(line, MOTION_TABLE[from].left[i]!);
      for (const [i, line] of RIGHT_MOTOR_LINES.entries()) lines.set(line, MOTION_TABLE[from].right[i]!);
      for (const [line, value] of gpio.writes) {
        lines.set(line, value);
        for (const bridge of [LEFT_MOTOR_LINES, RIGHT_MOTOR_LINES]) {
          const pattern = bridge.map((l) => lines.get(l)!) as unknown as [Bit, Bit, Bit, Bit];
          expect(shootsThrough(pattern), `${from}→${to} after writing ${line}=${value}`).toBe(false);
        }
      }
      expect(gpio.writes.length).toBe(8);
    }
  });

  it('applies concurrent commands one after the other', async () => {
    const gpio = new RecordingGpio({ root, simulated: true });
    const controller = await MotorController.create(gpio);
    gpio.writes = [];
    const results = await Promise.all([controller.setMotion('forward'), controller.setServoAngle(0), controller.setMotion('left')]);
    expect(results.map((s) => s.motion)).toEqual(['forward', 'forward', 'left']);
    // Each command's writes form one contiguous run: 8 motor, 8 servo, 8 motor.
    const kinds = gpio.writes.map(([line]) => (line >= 524 ? 's' : 'm')).join('');
    expect(kinds).toBe('m'.repeat(8) + 's'.repeat(8) + 'm'.repeat(8));
    expect(controller.state()).toMatchObject({ motion: 'left', servo: { angle: 0, value: 0 } });
  });

  it('refuses angles outside 0–180 without touching a line', async () => {
    const gpio = new RecordingGpio({ root, simulated: true });
    const controller = await MotorController.create(gpio);
    gpio.writes = [];
    await expect(controller.setServoAngle(-0.5)).rejects.toThrow(RangeError);
    await expect(controller.setServoAngle(180.01)).rejects.toThrow(RangeError);
    await expect(controller.setServoAngle(Number.NaN)).rejects.toThrow(RangeError);
    expect(gpio.writes).toEqual([]);
  });
});

describe('simulated sysfs', () => {
  let root: string;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-sim-'));
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('lays out export/unexport and creates gpioN on export, as the kernel would', async () => {
    const sim = await createSimulatedSysfs(path.join(root, 'gpio'));
    expect((await fs.readdir(sim.root)).sort()).toEqual(['export', 'unexport']);
    const gpio = new SysfsGpio({ root: sim.root, simulated: true });
    expect(await sim.exported(600)).toBe(false);
    await expect(gpio.write(600, 1)).rejects.toThrow(/ENOENT/); // not exported yet
    await gpio.setupOutput(600, 1);
    expect(await sim.exported(600)).toBe(true);
    expect(await sim.direction(600)).toBe('out');
    expect(await sim.value(600)).toBe(1);
    await gpio.write(600, 0);
    expect(await fs.readFile(path.join(sim.root, 'gpio600', 'value'), 'utf8')).toBe('0\n');
    // Laying out again keeps the exported lines.
    await createSimulatedSysfs(sim.root);
    expect(await sim.value(600)).toBe(0);
  });
});
