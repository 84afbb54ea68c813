/**
 * How the board's GPIO lines are wired to the car: two DC motors, each behind its own
 * discrete H-bridge of four switches, and a steering servo fed an 8-bit parallel value.
 *
 * Every motor's four lines each drive ONE switch of its bridge (1 = switch on):
 *
 *            V+                      line order in the patterns below:
 *        Q1 ─┤├─┐   ┌─┤├─ Q3           [Q1 high-side A, Q2 low-side A,
 *               A─M─B                   Q3 high-side B, Q4 low-side B]
 *        Q2 ─┤├─┘   └─┤├─ Q4
 *            GND
 *
 * Q1+Q4 on drives current A→B (the wheel turns forward), Q3+Q2 on drives B→A
 * (backward), all off lets the motor coast. Q1 with Q2 (or Q3 with Q4) would short the
 * supply ("shoot-through"): no pattern ever does that, and the controller switches lines
 * off before it switches others on, so no intermediate state does either.
 */

/** GPIO lines of the left motor's bridge, in pattern order [Q1, Q2, Q3, Q4]. */
export const LEFT_MOTOR_LINES = [516, 518, 520, 522] as const;
/** GPIO lines of the right motor's bridge, in pattern order [Q1, Q2, Q3, Q4]. */
export const RIGHT_MOTOR_LINES = [517, 519, 521, 523] as const;
/** Steering servo: an 8-bit parallel value, SERVO_LINES[i] carries bit i (524 is the LSB). */
export const SERVO_LINES = [524, 525, 526, 527, 528, 529, 530, 531] as const;

export const MOTOR_LINES: readonly number[] = [...LEFT_MOTOR_LINES, ...RIGHT_MOTOR_LINES];
export const ALL_LINES: readonly number[] = [...MOTOR_LINES, ...SERVO_LINES];

export type Bit = 0 | 1;
/** Switch states of one bridge: [Q1 high-A, Q2 low-A, Q3 high-B, Q4 low-B]. */
export type BridgePattern = readonly [Bit, Bit, Bit, Bit];

export const MOTIONS = ['forward', 'backward', 'left', 'right', 'stop'] as const;
export type Motion = (typeof MOTIONS)[number];

/**
 * THE motion table: what each command puts on each bridge. Left and right spin the car
 * in place (one side forward, the other backward); stop lets both motors coast, which is
 * also the state at power-up and after the script stops.
 */
export const MOTION_TABLE: Readonly<Record<Motion, { left: BridgePattern; right: BridgePattern }>> = {
  //         left  [Q1 Q2 Q3 Q4]   right [Q1 Q2 Q3 Q4]
  forward: { left: [1, 0, 0, 1], right: [1, 0, 0, 1] },
  backward: { left: [0, 1, 1, 0], right: [0, 1, 1, 0] },
  left: { left: [0, 1, 1, 0], right: [1, 0, 0, 1] },
  right: { left: [1, 0, 0, 1], right: [0, 1, 1, 0] },
  stop: { left: [0, 0, 0, 0], right: [0, 0, 0, 0] },
};

export type MotorDrive = 'forward' | 'backward' | 'coast';

/** What a bridge pattern does to its motor (for the state report). */
export function bridgeDrive(p: BridgePattern): MotorDrive {
  if (p[0] && p[3] && !p[1] && !p[2]) return 'forward';
  if (p[1] && p[2] && !p[0] && !p[3]) return 'backward';
  if (!p[0] && !p[1] && !p[2] && !p[3]) return 'coast';
  throw new Error(`bridge pattern ${p.join('')} is not one the motion table uses`);
}

/** True when a pattern would short the supply through one leg of the bridge. */
export function shootsThrough(p: BridgePattern): boolean {
  return (p[0] === 1 && p[1] === 1) || (p[2] === 1 && p[3] === 1);
}

/** The value of every motor line for a motion. */
export function motorLineValues(motion: Motion): Map<number, Bit> {
  const { left, right } = MOTION_TABLE[motion];
  const values = new Map<number, Bit>();
  LEFT_MOTOR_LINES.forEach((line, i) => values.set(line, left[i] as Bit));
  RIGHT_MOTOR_LINES.forEach((line, i) => values.set(line, right[i] as Bit));
  return values;
}

export const SERVO_MAX_ANGLE = 180;
export const SERVO_MAX_VALUE = 255;

/** Steering angle in degrees (0–180) to the servo's 8-bit value: round(angle × 255 / 180). */
export function angleToServoValue(angle: number): number {
  if (!Number.isFinite(angle) || angle < 0 || angle > SERVO_MAX_ANGLE) {
    throw new RangeError(`angle must be a number from 0 to ${SERVO_MAX_ANGLE}, got ${angle}`);
  }
  return Math.round((angle * SERVO_MAX_VALUE) / SERVO_MAX_ANGLE);
}

/** The value of every servo line for an 8-bit value (bit i on SERVO_LINES[i]). */
export function servoLineValues(value: number): Map<number, Bit> {
  const values = new Map<number, Bit>();
  SERVO_LINES.forEach((line, bit) => values.set(line, ((value >> bit) & 1) as Bit));
  return values;
}
