/** What a supervisor runs: one deployed program, with PORT set. */
export interface ScriptProcessSpec {
  scriptId: string;
  name: string;
  port: number;
  /** The program on disk. */
  file: string;
}

export type ScriptRunState = 'running' | 'stopped' | 'failed';

export interface SupervisedState {
  state: ScriptRunState;
  /** When it entered this state (ISO 8601). */
  since: string;
  /** Restarts by the supervisor since the last start. */
  restarts: number;
}

/**
 * Keeps device scripts running (docs/device-scripts.md): a systemd template unit on a real
 * board (systemd-supervisor.ts), supervised child processes on the simulated one
 * (child-supervisor.ts).
 */
export interface ScriptSupervisor {
  /** Starts the program (stopping what ran for this script first); the restart count starts again. */
  start(spec: ScriptProcessSpec): Promise<void>;
  /** After an agent restart: keeps what still runs, starts what does not. */
  resume(spec: ScriptProcessSpec): Promise<void>;
  stop(scriptId: string): Promise<void>;
  status(scriptId: string): Promise<SupervisedState>;
  /** Up and not restarted since its start (what a health check may trust). */
  alive(scriptId: string): Promise<boolean>;
  /** Recent output. */
  logs(scriptId: string): Promise<string>;
  /** Called whenever a script's state may have changed. */
  onChange(listener: () => void): void;
  /** The agent stops: the simulated board's children end with it; systemd units keep running. */
  close(): Promise<void>;
}
