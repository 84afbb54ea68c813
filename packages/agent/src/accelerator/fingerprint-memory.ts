import fsp from 'node:fs/promises';
import path from 'node:path';

/** Apps remembered at most (the oldest go first). */
const MAX_APPS = 128;

/**
 * The DPU fingerprint each app showed while it was active, kept in a small JSON file under
 * MM_AGENT_DIR (`accelerator.json`), so the control plane can tell which boards would fit
 * a model once they load the app it needs, before they do (facts.accelerator.apps[].dpu_fingerprint).
 */
export class FingerprintMemory {
  private known: Map<string, string> | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  async get(app: string): Promise<string | undefined> {
    return (await this.load()).get(app);
  }

  async all(): Promise<ReadonlyMap<string, string>> {
    return this.load();
  }

  /** Notes what the app showed; written to disk when it changed. */
  async remember(app: string, fingerprint: string): Promise<void> {
    const known = await this.load();
    if (known.get(app) === fingerprint) return;
    known.delete(app);
    known.set(app, fingerprint);
    while (known.size > MAX_APPS) known.delete(known.keys().next().value!);
    const text = `${JSON.stringify({ fingerprints: Object.fromEntries(known) }, null, 2)}\n`;
    this.saving = this.saving.then(async () => {
      await fsp.mkdir(path.dirname(this.file), { recursive: true });
      const temporary = `${this.file}.${process.pid}.tmp`;
      await fsp.writeFile(temporary, text);
      await fsp.rename(temporary, this.file);
    });
    await this.saving.catch(() => {});
  }

  private async load(): Promise<Map<string, string>> {
    if (this.known) return this.known;
    const known = new Map<string, string>();
    try {
      const doc = JSON.parse(await fsp.readFile(this.file, 'utf8')) as { fingerprints?: Record<string, unknown> };
      for (const [app, fp] of Object.entries(doc.fingerprints ?? {})) if (typeof fp === 'string') known.set(app, fp);
    } catch {
      // None yet, or unreadable: start afresh.
    }
    this.known ??= known;
    return this.known;
  }
}
