import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The simulated board's fpgautil (fpgautil.mjs, an executable Node script): loads a bitstream
 * and its device-tree overlay into the simulated FPGA, whose state is a JSON file in the
 * simulated board's folder (MM_SIM_STATE_DIR). Resolved next to this module; a bundle copies
 * the script beside it.
 */
export const simulatedFpgautilPath = fileURLToPath(new URL('./fpgautil.mjs', import.meta.url));

/** The simulated FPGA's state file, in the simulated board's folder. */
export const FPGA_STATE_FILE = 'fpga-sim-state.json';

/** What the simulated FPGA holds: the bitstream loaded and the overlay applied (absolute paths). */
export interface SimulatedFpgaState {
  bitstream: string | null;
  overlay: string | null;
  /** Loads since the simulated board was made, for tests. */
  loads: number;
}

export async function readSimulatedFpga(boardDir: string): Promise<SimulatedFpgaState | undefined> {
  try {
    return JSON.parse(await fsp.readFile(path.join(boardDir, FPGA_STATE_FILE), 'utf8')) as SimulatedFpgaState;
  } catch {
    return undefined;
  }
}

/**
 * A fresh simulated board boots with its base design in the FPGA: a DPU bitstream and its
 * overlay under the simulated firmware folder (what a ZCU104 or KV260 image loads at boot).
 */
export async function bootSimulatedFpga(boardDir: string): Promise<SimulatedFpgaState> {
  const known = await readSimulatedFpga(boardDir);
  if (known) return known;
  const firmware = path.join(boardDir, 'firmware', 'base-dpu');
  await fsp.mkdir(firmware, { recursive: true });
  const bitstream = path.join(firmware, 'base-dpu-b4096.bit.bin');
  const overlay = path.join(firmware, 'base-dpu-b4096.dtbo');
  await fsp.writeFile(bitstream, 'simulated base design: DPUCZDX8G B4096\n');
  await fsp.writeFile(overlay, 'simulated overlay of the base design\n');
  const state: SimulatedFpgaState = { bitstream, overlay, loads: 0 };
  await fsp.writeFile(path.join(boardDir, FPGA_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  return state;
}
