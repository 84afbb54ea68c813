#!/usr/bin/env node
// @ts-check
/**
 * The simulated board's fpgautil (mm-agent --simulate): plain JavaScript, no dependencies.
 * The options and messages of Xilinx's fpgautil that the agent uses:
 *
 *   fpgautil -b <bitstream> [-o <overlay.dtbo>] [-f Full|Partial] [-n <region>]
 *                                 load a bitstream (and apply its overlay)
 *   fpgautil -R [-n <region>]     remove the overlay applied
 *
 * The state (what is loaded) is MM_SIM_STATE_DIR/fpga-sim-state.json; MM_SIM_STATE_DIR is
 * required, so the simulator never stands in for a real board's tool by mistake. A missing or
 * empty file fails as the real tool does; a bitstream whose name contains `fail-load` fails
 * after the FPGA manager took it (for tests of a failed load); MM_SIM_FPGA_LOAD_MS (default
 * 150) is how long a load takes. A load ends the app the simulated dfx-mgrd had active
 * (dfx-mgr-sim-state.json in the same folder): the board has one FPGA.
 */
import fs from 'node:fs';
import path from 'node:path';

const stateDir = process.env.MM_SIM_STATE_DIR;
if (!stateDir) {
  process.stderr.write('fpgautil (simulated): MM_SIM_STATE_DIR is not set\n');
  process.exit(2);
}
const stateFile = path.join(stateDir, 'fpga-sim-state.json');

/** @returns {{ bitstream: string | null, overlay: string | null, loads: number }} */
function readState() {
  try {
    return JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  } catch {
    return { bitstream: null, overlay: null, loads: 0 };
  }
}

/** @param {{ bitstream: string | null, overlay: string | null, loads: number }} state */
function writeState(state) {
  const tmp = `${stateFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(tmp, stateFile);
}

/** @type {Record<string, string | true>} */
const opts = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '-R') opts.R = true;
  else if (/^-[bofnsp]$/.test(a ?? '')) opts[(a ?? '-').slice(1)] = argv[++i] ?? '';
  else if (a === '-h') opts.h = true;
  else {
    process.stderr.write(`fpgautil: invalid option ${a}\n`);
    process.exit(1);
  }
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const state = readState();

if (opts.h || (!opts.b && !opts.R)) {
  process.stdout.write('fpgautil: Loads a bitstream into the PL.\nUsage: fpgautil -b <bin file path> -o <dtbo file path>\n       fpgautil -R -n <overlay name>\n');
  process.exit(opts.h ? 0 : 1);
}

if (opts.R) {
  if (!state.overlay) {
    process.stdout.write('No overlay to remove\n');
    process.exit(0);
  }
  state.overlay = null;
  writeState(state);
  process.stdout.write('Removed the overlay\n');
  process.exit(0);
}

const bin = String(opts.b);
for (const file of [bin, ...(typeof opts.o === 'string' ? [opts.o] : [])]) {
  let size = -1;
  try {
    size = fs.statSync(file).size;
  } catch {
    process.stderr.write(`Error: ${file}: No such file or directory\n`);
    process.exit(1);
  }
  if (size === 0) {
    process.stderr.write(`Error: ${file} is empty\nFPGA manager failed to load the BIN file\n`);
    process.exit(1);
  }
}
const ms = Number(process.env.MM_SIM_FPGA_LOAD_MS ?? 150);
sleep(ms);
if (path.basename(bin).includes('fail-load')) {
  process.stderr.write('fpga_manager fpga0: Error while writing image data to FPGA\nFPGA manager failed to load the BIN file\n');
  process.exit(1);
}
state.bitstream = path.resolve(bin);
state.overlay = typeof opts.o === 'string' ? path.resolve(opts.o) : null;
state.loads += 1;
writeState(state);
// One FPGA: an app the simulated dfx-mgrd had active is no longer in the logic (sim-dfx-mgrd.mjs).
const dfxState = path.join(stateDir, 'dfx-mgr-sim-state.json');
try {
  const dfx = JSON.parse(fs.readFileSync(dfxState, 'utf8'));
  if (dfx && dfx.active) {
    const tmp = `${dfxState}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ ...dfx, active: null }, null, 2)}\n`);
    fs.renameSync(tmp, dfxState);
  }
} catch {
  // no dfx-mgrd on this simulated board
}
process.stdout.write(`Time taken to load BIN is ${ms.toFixed(6)} Milli Seconds\nBIN FILE loaded through FPGA manager successfully\n`);
