import type { SysfsGpio } from './sysfs-gpio.ts';
import {
  ALL_LINES,
  angleToServoValue,
  type Bit,
  bridgeDrive,
  MOTION_TABLE,
  type Motion,
  type MotorDrive,
  MOTOR_LINES,
  motorLineValues,
  servoLineValues,
} from './wiring.ts';

/** The steering servo starts centred rather than at a hard lock. */
export const INITIAL_SERVO_ANGLE = 90;

export interface MotorState {
  /** The last motion command (`stop` at start). */
  motion: Motion;
  motors: { left: MotorDrive; right: MotorDrive };
  servo: { angle: number; value: number };
  /** Every line's value as last written, keyed by GPIO number. */
  lines: Record<string, Bit>;
}

/** `timeout`: a drive command's hold ran out with no renewal (the dead-man stop). */
export type ChangeCause = 'motor' | 'servo' | 'timeout';

/**
 * Owns the GPIO lines: applies motion and servo commands one at a time (a command waits
 * for the previous one's writes) and reports each applied change.
 */
export class MotorController {
  private readonly lines = new Map<number, Bit>();
  private motion: Motion = 'stop';
  private servo = { angle: INITIAL_SERVO_ANGLE, value: angleToServoValue(INITIAL_SERVO_ANGLE) };
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(cause: ChangeCause, state: MotorState) => void>();

  private constructor(private readonly gpio: SysfsGpio) {}

  /** Exports every line as an output: motors stopped, servo centred. */
  static async create(gpio: SysfsGpio): Promise<MotorController> {
    const controller = new MotorController(gpio);
    const initial = new Map([...motorLineValues('stop'), ...servoLineValues(controller.servo.value)]);
    for (const line of ALL_LINES) {
      const value = initial.get(line) ?? 0;
      await gpio.setupOutput(line, value);
      controller.lines.set(line, value);
    }
    return controller;
  }

  onChange(listener: (cause: ChangeCause, state: MotorState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  state(): MotorState {
    const { left, right } = MOTION_TABLE[this.motion];
    return {
      motion: this.motion,
      motors: { left: bridgeDrive(left), right: bridgeDrive(right) },
      servo: { ...this.servo },
      lines: Object.fromEntries([...this.lines].sort(([a], [b]) => a - b).map(([line, v]) => [String(line), v])),
    };
  }

  setMotion(motion: Motion, cause: ChangeCause = 'motor'): Promise<MotorState> {
    return this.serialized(async () => {
      const target = motorLineValues(motion);
      // Break before make: every line that ends up off is switched off before any line
      // is switched on, so no half-applied pattern can short a bridge leg.
      for (const want of [0, 1] as const) {
        for (const [line, value] of target) if (value === want) await this.write(line, value);
      }
      this.motion = motion;
      return this.changed(cause);
    });
  }

  /** Sets the steering angle (degrees, 0–180); throws RangeError for anything else. */
  async setServoAngle(angle: number): Promise<MotorState> {
    const value = angleToServoValue(angle); // validated before queueing: a refused angle writes nothing
    return this.serialized(async () => {
      for (const [line, bit] of servoLineValues(value)) await this.write(line, bit);
      this.servo = { angle, value };
      return this.changed('servo');
    });
  }

  /** Stops both motors (used when the script shuts down); the servo keeps its position. */
  stopMotors(): Promise<void> {
    return this.serialized(async () => {
      for (const line of MOTOR_LINES) await this.write(line, 0);
      this.motion = 'stop';
    });
  }

  private async write(line: number, value: Bit): Promise<void> {
    await this.gpio.write(line, value);
    this.lines.set(line, value);
  }

  private changed(cause: ChangeCause): MotorState {
    const state = this.state();
    for (const listener of this.listeners) listener(cause, state);
    return state;
  }

  private serialized<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
