export { startMotorServer, STATE_EVENT, type MotorServer, type MotorServerOptions, type HoldTimers } from './motor-server.ts';
export { GPIO_MOTOR_SCRIPT, DEFAULT_MOTOR_PORT } from './script-entry.ts';
export { SysfsGpio, createSimulatedSysfs, DEFAULT_GPIO_ROOT, type SimulatedSysfs, type SysfsGpioOptions } from './sysfs-gpio.ts';
export { INITIAL_SERVO_ANGLE, type MotorState } from './motor-controller.ts';
export {
  LEFT_MOTOR_LINES,
  RIGHT_MOTOR_LINES,
  SERVO_LINES,
  MOTOR_LINES,
  ALL_LINES,
  MOTIONS,
  MOTION_TABLE,
  angleToServoValue,
  servoLineValues,
  motorLineValues,
  type Motion,
  type Bit,
} from './wiring.ts';
