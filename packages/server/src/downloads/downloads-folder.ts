import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/** `mm-agent_<version>_<arch>.deb`, as deploy/agent/package/build-debs.mjs names them. */
const AGENT_PACKAGE = /^mm-agent_([0-9][A-Za-z0-9.+~-]*)_(amd64|arm64)\.deb$/;
export const INSTALL_SCRIPT = 'install-agent.sh';
/** The command-line client, one file (packages/cli/dist/mm.mjs, copied here as `mm`). */
export const CLI_FILE = 'mm';
export const CHECKSUMS_FILE = 'SHA256SUMS';

export type DownloadKind = 'agent_package' | 'install_script' | 'cli';

export interface DownloadFile {
  name: string;
  kind: DownloadKind;
  version: string | null;
  arch: string | null;
  size: number;
  sha256: string;
  path: string;
  modifiedAt: Date;
}

/**
 * Debian-ish version order, good enough for our versions: numeric runs compare as numbers,
 * `~` sorts before anything (as in dpkg).
 */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/(\d+)/).filter((p) => p !== '');
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return y!.startsWith('~') ? 1 : -1;
    if (y === undefined) return x.startsWith('~') ? -1 : 1;
    if (x === y) continue;
    const nx = Number(x);
    const ny = Number(y);
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    if (x.startsWith('~') !== y.startsWith('~')) return x.startsWith('~') ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * What the control plane serves from MM_PACKAGES_DIR (docs/packages.md): the agent packages
 * built there by `pnpm run package:agent`, `install-agent.sh` and `mm`. Files are hashed
 * once per (size, mtime).
 */
export class DownloadsFolder {
  private static readonly hashes = new Map<string, { key: string; sha256: string }>();

  /**
   * @param fallbacks files served under a name the folder does not hold: in a checkout, the
   *   workspace's own `mm` bundle and `install-agent.sh`, so `pnpm start` serves them before any
   *   package is built (a missing fallback is simply not listed).
   */
  constructor(
    readonly dir: string,
    private readonly fallbacks: ReadonlyArray<{ name: string; path: string }> = [],
  ) {}

  private async sha256(file: string, key: string): Promise<string> {
    const hit = DownloadsFolder.hashes.get(file);
    if (hit?.key === key) return hit.sha256;
    const h = createHash('sha256');
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
    const sha256 = h.digest('hex');
    DownloadsFolder.hashes.set(file, { key, sha256 });
    return sha256;
  }

  /**
   * Every servable file, agent packages newest first. A missing folder holds nothing. Only
   * regular files that are inside the folder are served (issue 46): a link in the folder is
   * followed only when what it resolves to is a regular file inside the folder too, and that
   * resolved path is what is read; anything else is left out as if it were not there.
   */
  async list(): Promise<DownloadFile[]> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    const realDir = names.length ? await fsp.realpath(this.dir).catch(() => undefined) : undefined;
    const candidates: Array<{ name: string; path: string | undefined }> = names.map((name) => ({ name, path: undefined }));
    // Fallbacks are the server's own files (its checkout), not the folder's: served as they are.
    for (const f of this.fallbacks) if (!names.includes(f.name)) candidates.push(f);
    const files: DownloadFile[] = [];
    for (const { name, path: fallback } of candidates) {
      const pkg = AGENT_PACKAGE.exec(name);
      const kind: DownloadKind | undefined = pkg ? 'agent_package' : name === INSTALL_SCRIPT ? 'install_script' : name === CLI_FILE ? 'cli' : undefined;
      if (!kind) continue;
      const file = fallback ?? (realDir === undefined ? undefined : await resolveInside(realDir, name));
      if (file === undefined) continue;
      const st = await fsp.stat(file).catch(() => undefined);
      if (!st?.isFile()) continue;
      const sha256 = await this.sha256(file, `${st.size}:${st.mtimeMs}`);
      files.push({ name, kind, version: pkg?.[1] ?? null, arch: pkg?.[2] ?? null, size: st.size, sha256, path: file, modifiedAt: st.mtime });
    }
    return files.sort((a, b) => (a.kind === b.kind ? compareVersions(b.version ?? '', a.version ?? '') || a.name.localeCompare(b.name) : a.kind.localeCompare(b.kind)));
  }

  /** The newest agent package version held (for any architecture), if any. */
  async newestAgentVersion(): Promise<string | undefined> {
    return (await this.list()).find((f) => f.kind === 'agent_package')?.version ?? undefined;
  }

  /** The agent package of this version and architecture, if held. */
  async agentPackage(version: string, arch: string): Promise<DownloadFile | undefined> {
    return (await this.list()).find((f) => f.kind === 'agent_package' && f.version === version && f.arch === arch);
  }

  /** `sha256  name` lines of every file (what install-agent.sh reads and checks against). */
  async checksums(): Promise<string> {
    return (await this.list()).map((f) => `${f.sha256}  ${f.name}\n`).join('');
  }
}

/**
 * The real path of `name` in the folder `realDir` (itself a real path) when it is a regular
 * file there or a link that resolves to a regular file inside `realDir`; else undefined.
 */
async function resolveInside(realDir: string, name: string): Promise<string | undefined> {
  const entry = path.join(realDir, name);
  const lst = await fsp.lstat(entry).catch(() => undefined);
  if (!lst) return undefined;
  if (lst.isFile()) return entry;
  if (!lst.isSymbolicLink()) return undefined;
  const real = await fsp.realpath(entry).catch(() => undefined);
  if (real === undefined) return undefined;
  const rel = path.relative(realDir, real);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return (await fsp.stat(real).catch(() => undefined))?.isFile() ? real : undefined;
}
