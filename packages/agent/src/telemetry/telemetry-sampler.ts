import { systemClock, type Clock, type TelemetryReading, type TimerHandle } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { readHwmon, type HwmonReadings } from './hwmon.ts';
import { readDiskFree, readLoad1m, readMemoryUsed } from './system-readings.ts';

/** Where temperatures and power come from: the board's hwmon tree, or the simulated board. */
export interface SensorSource {
  /** `running`: a run is in progress (the simulated board heats up). */
  readSensors(running: boolean): Promise<HwmonReadings>;
  /**
   * The board's memory in use and load, where the source knows them itself (the simulated
   * board: its own 4 GB and 4 cores, not the host's); else they are read from `proc/`.
   */
  readSystem?(running: boolean): Promise<{ memory_used_bytes: number; load_1m: number }>;
}

/** The real board's sensors: hwmon under `root` (`/`; tests point it at a folder of their own). */
export function hwmonSensors(root: string): SensorSource {
  return { readSensors: () => readHwmon(root) };
}

/** What the board measured during one run (each only where the board measures it). */
export interface RunMeasures {
  max_temperature_c?: number;
  mean_power_w?: number;
}

export interface RunWatch {
  /** Ends the watch: the hottest sensor's peak and the mean power over the run's samples. */
  stop(): RunMeasures;
}

export interface TelemetrySamplerOptions {
  sensors: SensorSource;
  /** Where `proc/meminfo` and `proc/loadavg` are read (`/`). */
  root: string;
  /** Its file system's free space is `disk_free_bytes` (MM_AGENT_DIR). */
  agentDir: string;
  /** MM_TELEMETRY_INTERVAL_S in ms. */
  intervalMs: number;
  /** Sensors are read this often while a run is watched (default: 2 s, or the interval if shorter). */
  runIntervalMs?: number;
  /** Hands a reading to the link; false when it could not go (link down, server without the feature). */
  send: (reading: TelemetryReading) => boolean;
  log: Logger;
  clock?: Clock;
}

interface Watch {
  max: number | undefined;
  powerSum: number;
  powerCount: number;
}

/**
 * The agent's telemetry: every interval one reading (sensors, memory, load, free disk) goes
 * to the server; while a run is watched the sensors are also read every `runIntervalMs`, for
 * the run's peak temperature and mean power. Reading is a few small files and one statfs; a
 * reading still in progress when the next is due makes that one skip.
 */
export class TelemetrySampler {
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private runTimer: TimerHandle | undefined;
  private readonly watches = new Set<Watch>();
  private sampling = false;
  private stopped = false;

  constructor(private readonly opts: TelemetrySamplerOptions) {
    this.clock = opts.clock ?? systemClock;
  }

  start(): void {
    this.stopped = false;
    this.timer ??= this.clock.setInterval(() => void this.sendNow(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearInterval(this.timer);
    this.clock.clearInterval(this.runTimer);
    this.timer = this.runTimer = undefined;
  }

  /** One full reading of the board. */
  async read(): Promise<TelemetryReading> {
    const { root, agentDir } = this.opts;
    const own = this.opts.sensors.readSystem?.(this.watches.size > 0);
    const [sensors, memory, load, disk] = await Promise.all([
      this.readSensors(),
      own ? own.then((s) => s.memory_used_bytes) : readMemoryUsed(root),
      own ? own.then((s) => s.load_1m) : readLoad1m(root),
      readDiskFree(agentDir),
    ]);
    return {
      temperatures_c: sensors.temperatures_c,
      ...(sensors.power_w !== undefined ? { power_w: sensors.power_w } : {}),
      memory_used_bytes: memory ?? 0,
      load_1m: load ?? 0,
      disk_free_bytes: disk ?? 0,
    };
  }

  /** Reads and sends now (the interval's tick; also when the link comes up). */
  async sendNow(): Promise<void> {
    if (this.sampling || this.stopped) return;
    this.sampling = true;
    try {
      this.opts.send(await this.read());
    } catch (err) {
      this.opts.log.warn({ err }, 'could not read the board telemetry');
    } finally {
      this.sampling = false;
    }
  }

  /** The hottest sensor now (a run's `start_temperature_c`), undefined without sensors. */
  async hottestNow(): Promise<number | undefined> {
    const readings = await this.opts.sensors.readSensors(false);
    const temps = Object.values(readings.temperatures_c);
    return temps.length > 0 ? round2(Math.max(...temps)) : undefined;
  }

  /** Starts measuring a run: the sensors are read now and every `runIntervalMs` until `stop`. */
  watchRun(): RunWatch {
    const watch: Watch = { max: undefined, powerSum: 0, powerCount: 0 };
    this.watches.add(watch);
    if (!this.runTimer && !this.stopped) {
      const every = this.opts.runIntervalMs ?? Math.min(2000, this.opts.intervalMs);
      this.runTimer = this.clock.setInterval(() => void this.readSensors().catch(() => undefined), every);
      this.runTimer.unref();
    }
    void this.readSensors().catch((err: unknown) => this.opts.log.debug({ err }, 'could not read the sensors'));
    return {
      stop: () => {
        this.watches.delete(watch);
        if (this.watches.size === 0) {
          this.clock.clearInterval(this.runTimer);
          this.runTimer = undefined;
        }
        return {
          ...(watch.max !== undefined ? { max_temperature_c: round2(watch.max) } : {}),
          ...(watch.powerCount > 0 ? { mean_power_w: round2(watch.powerSum / watch.powerCount) } : {}),
        };
      },
    };
  }

  /** Reads the sensors and feeds every watched run. */
  private async readSensors(): Promise<HwmonReadings> {
    const readings = await this.opts.sensors.readSensors(this.watches.size > 0);
    const temps = Object.values(readings.temperatures_c);
    const hottest = temps.length > 0 ? Math.max(...temps) : undefined;
    for (const w of this.watches) {
      if (hottest !== undefined) w.max = w.max === undefined ? hottest : Math.max(w.max, hottest);
      if (readings.power_w !== undefined) {
        w.powerSum += readings.power_w;
        w.powerCount += 1;
      }
    }
    return readings;
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
