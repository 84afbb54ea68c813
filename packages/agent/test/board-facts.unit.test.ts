import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BoardFactsCollector, countCpuList, factsChanged, memTotalBytes, parseOsRelease } from '../src/board/board-facts.ts';
import { encodeFruBoardInfo, parseFruBoardInfo } from '../src/board/fru.ts';
import { writeSimulatedHostTree } from '../src/simulate/simulated-host-tree.ts';
import { AGENT_VERSION } from '../src/version.ts';

const roots: string[] = [];
async function tree(files: Record<string, string | Buffer> = {}): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-facts-'));
  roots.push(root);
  for (const [rel, data] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), data);
  }
  return root;
}
const collect = (root: string, activePac: string | null = null) =>
  new BoardFactsCollector({ root, agentDir: root, activePac: async () => activePac }).collect();

afterEach(async () => {
  for (const r of roots.splice(0)) await fs.rm(r, { recursive: true, force: true });
});

describe('board facts from a host tree', () => {
  it('reads a ZCU104: NUL-terminated device-tree model, os-release, kernel, CPUs, memory', async () => {
    const root = await tree({
      'proc/device-tree/model': 'ZynqMP ZCU104 RevC\0',
      'etc/os-release': 'NAME="PetaLinux"\nVERSION_ID="2023.2"\nID=petalinux\nPRETTY_NAME="PetaLinux 2023.2"\n',
      'proc/sys/kernel/osrelease': '6.1.30-xilinx-v2023.2\n',
      'sys/devices/system/cpu/online': '0-3\n',
      'proc/meminfo': 'MemTotal:        2007436 kB\nMemFree: 1 kB\n',
    });
    const facts = await collect(root, 'zcu104-base');
    expect(facts).toMatchObject({
      board_model: 'ZynqMP ZCU104 RevC',
      device_tree_model: 'ZynqMP ZCU104 RevC',
      os: 'PetaLinux 2023.2',
      os_id: 'petalinux',
      os_version_id: '2023.2',
      kernel: '6.1.30-xilinx-v2023.2',
      cpu_count: 4,
      memory_bytes: 2007436 * 1024,
      agent_version: AGENT_VERSION,
      node_version: process.versions.node,
      active_pac: 'zcu104-base',
      hostname: os.hostname(),
    });
    expect(typeof facts.arch).toBe('string');
    expect(facts.disk_free_bytes).toBeGreaterThan(0);
    expect(facts.serial).toBeUndefined();
  });

  it('falls back to /sys/firmware/devicetree/base/model and /usr/lib/os-release', async () => {
    const root = await tree({
      'sys/firmware/devicetree/base/model': 'Xilinx ZCU102 Rev1.0\0',
      'usr/lib/os-release': 'NAME=Debian\nVERSION="12 (bookworm)"\n',
    });
    const facts = await collect(root);
    expect(facts.board_model).toBe('Xilinx ZCU102 Rev1.0');
    expect(facts.os).toBe('Debian 12 (bookworm)');
  });

  it('cuts a fact longer than the link takes (200 characters) instead of failing the hello', async () => {
    const { BoardFacts } = await import('@mm/protocol');
    const facts = await collect(await tree({ 'proc/device-tree/model': `${'M'.repeat(500)}\0`, 'etc/os-release': `PRETTY_NAME="${'x'.repeat(300)}"\n` }));
    expect(facts.board_model).toHaveLength(200);
    expect(facts.os).toHaveLength(200);
    expect(BoardFacts.safeParse(facts).success).toBe(true);
  });

  it('with nothing in the tree: no board model, and what Node says for the rest', async () => {
    const facts = await collect(await tree());
    expect(facts.board_model).toBeUndefined();
    expect(facts.os).toBe(`${os.type()} ${os.release()}`);
    expect(facts.kernel).toBe(os.release());
    expect(facts.cpu_count).toBe(os.availableParallelism());
    expect(facts.memory_bytes).toBe(os.totalmem());
    expect(facts.active_pac).toBeNull();
  });

  it('reads a Kria KV260 from its SOM and carrier FRU EEPROMs', async () => {
    const root = await tree();
    await writeSimulatedHostTree(root, 'kv260');
    const facts = await collect(root);
    expect(facts).toMatchObject({
      board_model: 'Kria KV260 Vision AI Starter Kit',
      carrier_model: 'SCK-KV-G',
      som_model: 'SMK-K26-XCL2G',
      device_tree_model: 'ZynqMP SMK-K26 Rev1/B/A',
      serial: 'XFL1SIM0K26A',
      os: 'Ubuntu 22.04.4 LTS',
      os_id: 'ubuntu',
      os_version_id: '22.04',
    });
  });

  it('ignores an EEPROM that is not a FRU image (bad checksum, blank)', async () => {
    const good = encodeFruBoardInfo({ manufacturer: 'XILINX', product: 'SCK-KR-G', serial: 'S1', part_number: 'P1' });
    const corrupt = Buffer.from(good);
    corrupt[20] = corrupt[20]! ^ 0xff;
    const root = await tree({
      'proc/device-tree/model': 'ZynqMP SMK-K26 Rev1/B/A\0',
      'sys/bus/i2c/devices/1-0050/eeprom': Buffer.alloc(256, 0xff),
      'sys/bus/i2c/devices/1-0051/eeprom': corrupt,
    });
    const facts = await collect(root);
    expect(facts.board_model).toBe('ZynqMP SMK-K26 Rev1/B/A');
    expect(facts.carrier_model).toBeUndefined();
    expect(parseFruBoardInfo(good)).toEqual({ manufacturer: 'XILINX', product: 'SCK-KR-G', serial: 'S1', part_number: 'P1' });
    expect(parseFruBoardInfo(corrupt)).toBeUndefined();
  });
});

describe('fact parsing helpers', () => {
  it('parses os-release lines, cpu lists and MemTotal', () => {
    expect(parseOsRelease('# c\nID=ubuntu\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nX=\'q\'\nbad line\n')).toEqual({ ID: 'ubuntu', PRETTY_NAME: 'Ubuntu 22.04.4 LTS', X: 'q' });
    expect(countCpuList('0-3,6\n')).toBe(5);
    expect(countCpuList('0')).toBe(1);
    expect(countCpuList('x')).toBeUndefined();
    expect(memTotalBytes('MemTotal: 10 kB')).toBe(10240);
    expect(memTotalBytes('nothing')).toBeUndefined();
  });

  it('a change of free disk alone is no change; the active PAC is', () => {
    const a = { active_pac: 'a', disk_free_bytes: 1, os: 'x' };
    expect(factsChanged(undefined, a)).toBe(true);
    expect(factsChanged(a, { ...a, disk_free_bytes: 2 })).toBe(false);
    expect(factsChanged(a, { ...a, active_pac: 'b' })).toBe(true);
    expect(factsChanged(a, { ...a, serial: 's' })).toBe(true);
  });
});
