import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BoardFacts } from '@mm/protocol';
import { debianArch } from '../enroll/board-facts.ts';
import { AGENT_VERSION } from '../version.ts';
import { FRU_READ_BYTES, parseFruBoardInfo, type FruBoardInfo } from './fru.ts';

export type { BoardFacts };

export interface FactsSources {
  /**
   * The folder `/proc`, `/sys` and `/etc` are read under: `/` on a board, a fake tree in
   * tests and on the simulated board (MM_HOST_ROOT).
   */
  root: string;
  /** Free space is measured where the agent keeps its files (MM_AGENT_DIR). */
  agentDir: string;
  activePac: () => Promise<string | null>;
}

/** Names the Kria carrier cards' FRU product names stand for (what `xmutil boardid` prints them as). */
const KRIA_CARRIERS: Record<string, string> = {
  'SCK-KV-G': 'Kria KV260 Vision AI Starter Kit',
  'SCK-KR-G': 'Kria KR260 Robotics Starter Kit',
  'SCK-KD-G': 'Kria KD240 Drives Starter Kit',
};

/** Facts that change by themselves all the time: a change of these alone is not worth a `board.facts`. */
const VOLATILE_FACTS: ReadonlySet<string> = new Set(['disk_free_bytes']);

async function readSmall(file: string, maxBytes = 4096): Promise<Buffer | undefined> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(file, 'r');
    const buf = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buf, 0, maxBytes, 0);
    return buf.subarray(0, bytesRead);
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
}

async function readText(file: string): Promise<string | undefined> {
  const buf = await readSmall(file);
  if (!buf) return undefined;
  // Device-tree strings end in NUL; several NUL-separated strings become one, space-separated.
  const text = buf.toString('utf8').replace(/\0+$/g, '').replace(/\0/g, ' ').trim();
  return text || undefined;
}

/** `/etc/os-release` (or `/usr/lib/os-release`): its key=value lines, quotes removed. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    out[m[1]!] = m[2]!.replace(/^(["'])(.*)\1$/, '$2').replace(/\\(["'$`\\])/g, '$1');
  }
  return out;
}

/** `0-3,6` (sysfs cpu list) → 5. */
export function countCpuList(list: string): number | undefined {
  let n = 0;
  for (const part of list.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    n += m[2] !== undefined ? Number(m[2]) - Number(m[1]) + 1 : 1;
  }
  return n > 0 ? n : undefined;
}

/** `MemTotal:  4021740 kB` → bytes. */
export function memTotalBytes(meminfo: string): number | undefined {
  const m = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : undefined;
}

/**
 * What the agent tells the control plane about its board (docs/fleet-facts.md): read from
 * `root` each time except the FRU EEPROMs (read once: they do not change while it runs).
 */
export class BoardFactsCollector {
  private fru: Promise<FruBoardInfo[]> | undefined;

  constructor(private readonly sources: FactsSources) {}

  async collect(): Promise<BoardFacts> {
    const { root } = this.sources;
    const at = (...p: string[]) => path.join(root, ...p);
    const [osRelease, kernel, dtModel, dtSerial, cpuList, meminfo, fru, diskFree, activePac] = await Promise.all([
      readText(at('etc/os-release')).then((t) => t ?? readText(at('usr/lib/os-release'))),
      readText(at('proc/sys/kernel/osrelease')),
      readText(at('proc/device-tree/model')).then((t) => t ?? readText(at('sys/firmware/devicetree/base/model'))),
      readText(at('proc/device-tree/serial-number')).then((t) => t ?? readText(at('sys/firmware/devicetree/base/serial-number'))),
      readText(at('sys/devices/system/cpu/online')),
      readText(at('proc/meminfo')),
      (this.fru ??= this.readFruEeproms()),
      this.diskFree(),
      this.sources.activePac().catch(() => null),
    ]);
    const release = osRelease ? parseOsRelease(osRelease) : {};
    const carrier = fru.find((f) => f.product?.startsWith('SCK-'));
    const som = fru.find((f) => f.product?.startsWith('SM'));
    const facts: BoardFacts = {
      arch: debianArch(),
      os: release.PRETTY_NAME ?? ([release.NAME, release.VERSION].filter(Boolean).join(' ') || `${os.type()} ${os.release()}`),
      ...(release.ID ? { os_id: release.ID } : {}),
      ...(release.VERSION_ID ? { os_version_id: release.VERSION_ID } : {}),
      kernel: kernel ?? os.release(),
      ...boardModel(dtModel, carrier, som),
      cpu_count: (cpuList ? countCpuList(cpuList) : undefined) ?? os.availableParallelism(),
      memory_bytes: (meminfo ? memTotalBytes(meminfo) : undefined) ?? os.totalmem(),
      ...(diskFree !== undefined ? { disk_free_bytes: diskFree } : {}),
      agent_version: AGENT_VERSION,
      node_version: process.versions.node,
      active_pac: activePac,
      hostname: os.hostname(),
    };
    const serial = som?.serial ?? carrier?.serial ?? fru[0]?.serial ?? dtSerial;
    if (serial) facts.serial = serial;
    return clipFacts(facts);
  }

  /** The FRU board areas of the EEPROMs at I²C addresses 0x50–0x57 (Kria: SOM 1-0050, carrier 1-0051). */
  private async readFruEeproms(): Promise<FruBoardInfo[]> {
    const dir = path.join(this.sources.root, 'sys/bus/i2c/devices');
    let names: string[];
    try {
      names = (await fsp.readdir(dir)).filter((n) => /^\d+-005[0-7]$/.test(n)).sort();
    } catch {
      return [];
    }
    const found: FruBoardInfo[] = [];
    for (const name of names) {
      const image = await readSmall(path.join(dir, name, 'eeprom'), FRU_READ_BYTES);
      const info = image ? parseFruBoardInfo(image) : undefined;
      if (info) found.push(info);
    }
    return found;
  }

  private async diskFree(): Promise<number | undefined> {
    try {
      const s = await fsp.statfs(this.sources.agentDir);
      return s.bavail * s.bsize;
    } catch {
      return undefined;
    }
  }
}

/** The board's model: a Kria carrier card's name from its FRU, else the device tree's model. */
function boardModel(dtModel: string | undefined, carrier: FruBoardInfo | undefined, som: FruBoardInfo | undefined): Partial<BoardFacts> {
  const out: Record<string, string> = {};
  if (carrier?.product) {
    out.board_model = KRIA_CARRIERS[carrier.product] ?? carrier.product;
    out.carrier_model = carrier.product;
  } else if (dtModel) out.board_model = dtModel;
  if (som?.product) out.som_model = som.product;
  if (dtModel) out.device_tree_model = dtModel;
  return out;
}

/** Longest text a fact may hold on the link (protocol BoardFacts): a longer one (an odd os-release) is cut, never refused. */
const MAX_FACT_CHARS = 200;

function clipFacts(facts: BoardFacts): BoardFacts {
  const out: BoardFacts = {};
  for (const [k, v] of Object.entries(facts)) out[k] = typeof v === 'string' ? v.slice(0, MAX_FACT_CHARS) : v;
  return out;
}

/** Whether two fact sets differ in anything but the volatile facts (free disk). */
export function factsChanged(before: BoardFacts | undefined, after: BoardFacts): boolean {
  if (!before) return true;
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const k of keys) {
    if (VOLATILE_FACTS.has(k)) continue;
    if (before[k] !== after[k]) return true;
  }
  return false;
}
