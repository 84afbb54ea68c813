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

  /**
   * A bar for `total` bytes. `estimated`: the size is only known roughly (a streamed ZIP):
   * shown as `~size` until the end, when the bar shows what really arrived.
   */
  bar(label: string, total: number, opts: { estimated?: boolean } = {}): ProgressBar {
    if (this.quiet) return { add() {}, set() {}, done() {} };
    return this.tty ? this.ttyBar(label, total, opts.estimated ?? false) : this.plainBar(label, total, opts.estimated ?? false);
  }

  private ttyBar(label: string, total: number, estimated: boolean): ProgressBar {
    // Our own tokens only: cli-progress fills its built-in {eta} (bare seconds, `0` at the end) over any payload of that name.
    this.multi ??= new cliProgress.MultiBar(
      {
        format: '{label} {bar} {status}',
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
    const name = label.padEnd(28).slice(0, 28);
    const running = () => {
      const s = speed.sample(done);
      const all = total > 0 ? `${estimated ? '~' : ''}${bytes(total)}` : '?';
      const pct = total > 0 ? `${String(Math.min(99, Math.floor((done / total) * 100))).padStart(3)}% ` : '';
      const left = s > 0 && total > done ? `, ${duration(((total - done) / s) * 1000)} left` : '';
      return { label: name, status: `${pct}${bytes(done)} of ${all}, ${rate(s)}${left}` };
    };
    const bar = this.multi.create(Math.max(total, 1), 0, running());
    const show = () => bar.update(Math.min(done, Math.max(total - 1, 0)), running());
    return {
      add: (n) => {
        done += n;
        show();
      },
      set: (d) => {
        done = d;
        show();
      },
      done: (note) => {
        // The size that really came (or the file's, when nothing had to be read: `cached`).
        const size = done > 0 ? done : total;
        bar.setTotal(Math.max(size, 1));
        bar.update(Math.max(size, 1), { label: name, status: `100% ${bytes(size)}${note ? `, ${note}` : ''}` });
        if (--this.open === 0) {
          this.multi?.stop();
          this.multi = undefined;
        }
      },
    };
  }

  private plainBar(label: string, total: number, estimated: boolean): ProgressBar {
    const started = Date.now();
    let done = 0;
    let from = 0;
    let lastTenth = -1;
    let lastAt = 0;
    const all = `${estimated ? 'about ' : ''}${bytes(total)}`;
    const report = () => {
      const tenth = total > 0 ? Math.floor((done / total) * 10) : 10;
      if (tenth === lastTenth || Date.now() - lastAt < 1000 || tenth >= 10) return;
      lastTenth = tenth;
      lastAt = Date.now();
      process.stderr.write(`${label}: ${Math.floor((done / Math.max(total, 1)) * 100)}% (${bytes(done)} of ${all})\n`);
    };
    return {
      add: (n) => {
        done += n;
        report();
      },
      set: (d) => {
        done = d;
        from = d;
        if (d > 0) process.stderr.write(`${label}: continuing at ${bytes(d)} of ${all}\n`);
      },
      done: (note) => {
        const size = done > 0 ? done : total;
        const s = (Date.now() - started) / 1000;
        const moved = size - from;
        const how = note ? `, ${note}` : moved > 0 && s > 0 ? ` in ${s.toFixed(1)} s (${rate(moved / s)})` : ', done';
        process.stderr.write(`${label}: ${bytes(size)}${how}\n`);
      },
    };
  }

  stop(): void {
    this.multi?.stop();
    this.multi = undefined;
  }
}
