/**
 * What the GPIO motor script answers and streams (packages/gpio-motor: `{ motion, motors,
 * servo, hold_ms?, cause? }`), in words. Anything else (another script's answer) is shown
 * as compact JSON: the script is the board's, not ours.
 */
interface MotorStateLike {
  motion: string;
  motors?: { left?: string; right?: string };
  servo?: { angle?: number };
  hold_ms?: number | null;
  cause?: string;
}

function isMotorState(v: unknown): v is MotorStateLike {
  return Boolean(v) && typeof v === 'object' && typeof (v as { motion?: unknown }).motion === 'string';
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(2))} s`;

function motion(s: MotorStateLike): string {
  if (s.motion === 'stop') return 'stopped';
  const wheels = s.motors?.left && s.motors.right ? ` (left wheels ${s.motors.left}, right wheels ${s.motors.right})` : '';
  return `driving ${s.motion}${wheels}`;
}

const servo = (s: MotorStateLike) => (typeof s.servo?.angle === 'number' ? `steering at ${s.servo.angle}°` : '');

/** The answer to `mm motor` / `mm servo`. */
export function describeCommand(state: unknown): string {
  if (!isMotorState(state)) return JSON.stringify(state);
  const hold = state.motion !== 'stop' && typeof state.hold_ms === 'number' ? `, for ${seconds(state.hold_ms)} unless renewed` : '';
  return [`Motor ${motion(state)}${hold}`, servo(state)].filter(Boolean).join('; ') + '.';
}

/** One line of `mm events`: the time it arrived, then what happened. */
export function describeEvent(event: string, data: unknown, at = new Date()): string {
  const time = at.toTimeString().slice(0, 8);
  if (event === 'upstream' && data && typeof data === 'object' && 'state' in data) {
    return `${time}  ${(data as { state: unknown }).state === 'down' ? 'the script stream dropped (the board or the script is away); waiting for it' : 'the script stream is back'}`;
  }
  if (isMotorState(data)) {
    const why: Record<string, string> = { connect: 'now', motor: 'motor', servo: 'servo', timeout: 'hold ran out' };
    return `${time}  ${(why[data.cause ?? ''] ?? data.cause ?? event).padEnd(12)}  ${motion(data)}, ${servo(data) || 'steering unknown'}`;
  }
  return `${time}  ${event}: ${typeof data === 'string' ? data : JSON.stringify(data)}`;
}
