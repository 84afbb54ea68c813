/** One sample of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"\s*,?/g;

/** Parses the text format strictly enough for tests: a line it cannot read throws. */
export function parsePrometheus(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (m) types.set(m[1]!, m[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    const raw = m[3]!;
    // Prometheus reads values with Go's ParseFloat: `NaN` in any case (prom-client writes `Nan`).
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : /^nan$/i.test(raw) ? NaN : Number(raw);
    if (Number.isNaN(value) && !/^nan$/i.test(raw)) throw new Error(`bad sample value in ${JSON.stringify(line)}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { samples, types };
}

/** The samples of `name` whose labels include all of `labels`. */
export function find(scrape: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return scrape.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one value of `name` with these labels (summed when several series match). */
export function value(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return find(scrape, name, labels).reduce((sum, s) => sum + s.value, 0);
}
