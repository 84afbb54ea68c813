import fsp from 'node:fs/promises';
import path from 'node:path';
import { encodeFruBoardInfo } from '../board/fru.ts';

export type SimulatedBoardModel = 'zcu104' | 'kv260';

/** The simulated board's memory and cores (its telemetry reports these, never the host's). */
export function simulatedBoardSize(model: SimulatedBoardModel): { memTotalBytes: number; cpus: number } {
  const m = MODELS[model];
  const [from, to] = m.cpus.split('-').map(Number);
  return { memTotalBytes: m.memTotalKb * 1024, cpus: (to ?? from ?? 0) - (from ?? 0) + 1 };
}

/** What a real board of each model shows (device tree, FRU EEPROMs, OS), close to what AMD ships. */
const MODELS: Record<SimulatedBoardModel, {
  deviceTreeModel: string;
  osRelease: string;
  kernel: string;
  cpus: string;
  memTotalKb: number;
  /** sysfs I²C device name → the FRU board area in its EEPROM. */
  eeproms: Record<string, Parameters<typeof encodeFruBoardInfo>[0]>;
}> = {
  zcu104: {
    deviceTreeModel: 'ZynqMP ZCU104 RevC',
    osRelease: 'PRETTY_NAME="PetaLinux 2023.2"\nNAME="PetaLinux"\nID=petalinux\nVERSION_ID="2023.2"\nVERSION="2023.2"\n',
    kernel: '6.1.30-xilinx-v2023.2',
    cpus: '0-3',
    memTotalKb: 2_007_436,
    eeproms: {},
  },
  kv260: {
    deviceTreeModel: 'ZynqMP SMK-K26 Rev1/B/A',
    osRelease:
      'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.4 LTS (Jammy Jellyfish)"\nID=ubuntu\nID_LIKE=debian\n',
    kernel: '5.15.0-1027-xilinx-zynqmp',
    cpus: '0-3',
    memTotalKb: 4_021_740,
    eeproms: {
      '1-0050': { manufacturer: 'XILINX', product: 'SMK-K26-XCL2G', serial: 'XFL1SIM0K26A', part_number: '5057-04' },
      '1-0051': { manufacturer: 'XILINX', product: 'SCK-KV-G', serial: 'XFL1SIM0KV26', part_number: '5066-01' },
    },
  },
};

/**
 * Lays out the files a real board of `model` has that the agent reads for its facts
 * (board-facts.ts), under `root`: `/proc/device-tree/model` (NUL-terminated), FRU EEPROMs
 * in sysfs, `/etc/os-release`, the kernel release, the CPUs online and `MemTotal`.
 */
export async function writeSimulatedHostTree(root: string, model: SimulatedBoardModel): Promise<void> {
  const m = MODELS[model];
  const write = async (rel: string, data: string | Buffer) => {
    const file = path.join(root, rel);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.writeFile(file, data);
  };
  await fsp.rm(path.join(root, 'sys/bus/i2c/devices'), { recursive: true, force: true });
  await write('proc/device-tree/model', `${m.deviceTreeModel}\0`);
  await write('etc/os-release', m.osRelease);
  await write('proc/sys/kernel/osrelease', `${m.kernel}\n`);
  await write('sys/devices/system/cpu/online', `${m.cpus}\n`);
  await write('proc/meminfo', `MemTotal:       ${m.memTotalKb} kB\nMemFree:         1204312 kB\nMemAvailable:   ${Math.round(m.memTotalKb * 0.7)} kB\n`);
  await write('proc/loadavg', '0.12 0.10 0.08 1/142 1234\n');
  for (const [device, info] of Object.entries(m.eeproms)) await write(`sys/bus/i2c/devices/${device}/eeprom`, encodeFruBoardInfo(info));
}
