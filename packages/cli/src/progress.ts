import cliProgress from 'cli-progress';
import { bytes, duration, rate } from './format.ts';

export interface ProgressBar {
  /** `n` more bytes done. */
  add(n: number): void;
  /** Done so far (e.g. where a resumed upload starts). */
  set(done: number): void;
  done(note?: string): void;
}

/** A moving speed over the last few seconds of samples. */
class Speed {
  private samples: Array<[number, number]> = [];
  sample(done: number): number {
    const now = Date.now();
    this.samples.push([now, done]);
    while (this.samples.length > 2 && now - this.samples[0]![0] > 5000) this.samples.shift();
    const [t0, d0] = this.samples[0]!;
    return now > t0 ? ((done - d0) * 1000) / (now - t0) : 0;
  }
}

/**
 * Progress on stderr: one bar per file (speed and time left) when stderr is a terminal,
 * otherwise plain lines now and then, nothing at all when quiet (`--json`).
 */
export class Progress {
  private multi: cliProgress.MultiBar | undefined;
  private open = 0;

  constructor(
    private readonly tty: boolean = Boolean(process.stderr.isTTY),
    private readonly quiet = false,
  ) {}

  /** A line on stderr that does not tear the bars. */
  note(line: string): void {
    if (this.quiet) return;
    if (this.multi) this.multi.log(`${line}\n`);
    else process.stderr.write(`${line}\n`);
  }

  bar(label: string, total: number): ProgressBar {
    if (this.quiet) return { add() {}, set() {}, done() {} };
    return this.tty ? this.ttyBar(label, total) : this.plainBar(label, total);
  }

  private ttyBar(label: string, total: number): ProgressBar {
    this.multi ??= new cliProgress.MultiBar(
      {
        format: '{label} {bar} {percentage}% {done}/{all} {speed} {eta}',
        barsize: 24,
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        fps: 5,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    this.open++;
    const speed = new Speed();
    let done = 0;
    const payload = () => {
      const s = speed.sample(done);
      return { label: label.padEnd(28).slice(0, 28), done: bytes(done), all: bytes(total), speed: rate(s), eta: s > 0 ? `${duration(((total - done) / s) * 1000)} left` : '' };
    };
    const bar = this.multi.create(Math.max(total, 1), 0, payload());
    return {
      add: (n) => {
        done += n;
        bar.update(Math.min(done, total), payload());
      },
      set: (d) => {
        done = d;
        bar.update(Math.min(done, total), payload());
      },
      done: (note) => {
        done = total;
        bar.update(Math.max(total, 1), { ...payload(), speed: note ?? 'done', eta: '' });
        if (--this.open === 0) {
          this.multi?.stop();
          this.multi = undefined;
        }
      },
    };
  }

  private plainBar(label: string, total: number): ProgressBar {
    const started = Date.now();
    let done = 0;
    let from = 0;
    let lastTenth = -1;
    let lastAt = 0;
    const report = () => {
      const tenth = total > 0 ? Math.floor((done / total) * 10) : 10;
      if (tenth === lastTenth || Date.now() - lastAt < 1000 || tenth >= 10) return;
      lastTenth = tenth;
      lastAt = Date.now();
      process.stderr.write(`${label}: ${Math.floor((done / Math.max(total, 1)) * 100)}% (${bytes(done)} of ${bytes(total)})\n`);
    };
    return {
      add: (n) => {
        done += n;
        report();
      },
      set: (d) => {
        done = d;
        from = d;
        if (d > 0) process.stderr.write(`${label}: continuing at ${bytes(d)} of ${bytes(total)}\n`);
      },
      done: (note) => {
        const s = (Date.now() - started) / 1000;
        const moved = total - from;
        process.stderr.write(`${label}: ${note ?? `done, ${bytes(total)}`}${moved > 0 && s > 0 && !note ? ` in ${s.toFixed(1)} s (${rate(moved / s)})` : ''}\n`);
      },
    };
  }

  stop(): void {
    this.multi?.stop();
    this.multi = undefined;
  }
}
