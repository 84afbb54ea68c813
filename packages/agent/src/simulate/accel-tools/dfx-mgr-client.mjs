#!/usr/bin/env node
// @ts-check
/**
 * The simulated board's dfx-mgr-client (mm-agent --simulate), in the output format of the
 * 2022.x–2023.x client that Kria Ubuntu 22.04 ships (Xilinx/dfx-mgr, daemon_helper.c
 * listAccelerators and example/sys/linux/dfx-mgr-client.c):
 *
 *   dfx-mgr-client -listPackage      the table: Accelerator Accel_type Base Base_type #slots(PL+AIE) Active_slot
 *   dfx-mgr-client -load <name>      "<name>: loaded to slot 0", or "<name>: load Error: -1"
 *   dfx-mgr-client -remove [slot]    "remove from slot 0 returns: 0 (Ok)", or "... -1 (Error)"
 *
 * Like the real one it exits 0 whatever happened. The reason of a failed load, which the real
 * daemon writes to its own log (journalctl -u dfx-mgr), is printed on the line before, as
 * the daemon logs it ("Remove previously loaded accelerator, no empty slot"). Settings and
 * each app's simulated behaviour (sim.json): see sim-dfx-mgrd.mjs.
 */
import { activeApp, hangForever, listApps, pause, readState, simFromEnv, updateVartConf, writeFpga, writeState } from './sim-dfx-mgrd.mjs';

const USAGE = `Usage dfx-mgr-client COMMAND
Commmands
-listPackage\t\t List locally downloaded accelerator package
-load <accel_name>\t\t Load the provided accelerator packaged
-remove <slot#>\t\t Unload package previously programmed
`;

main();

function main() {
  const [command, arg] = process.argv.slice(2);
  if (command === undefined) {
    process.stdout.write('Expects an argument. Use -h to see options\n');
    return;
  }
  if (command === '-h' || command === '--help') {
    process.stdout.write(USAGE);
    return;
  }
  const sim = simFromEnv();
  if (command === '-listPackage') listPackage(sim);
  else if (command === '-load') load(sim, arg);
  else if (command === '-remove') remove(sim, arg ?? '0');
  else process.stdout.write('Option not recognized, Try again.\n');
}

function listPackage(sim) {
  const { active } = readState(sim);
  const row = (a, b, c, d, e, f) => `${a.padStart(32)}${b.padStart(20)}${c.padStart(32)}${d.padStart(20)}${e.padStart(20)}${f.padStart(20)}\n`;
  let out = `${row('Accelerator', 'Accel_type', 'Base', 'Base_type', '#slots(PL+AIE)', 'Active_slot')}\n`;
  for (const app of listApps(sim)) {
    const slot = active?.name === app.name ? `${active.slot},` : '-1';
    out += row(app.name, app.type, app.name, app.type, app.slots, slot);
  }
  process.stdout.write(out);
}

function load(sim, name) {
  if (name === undefined) {
    process.stdout.write('-load expects a package name. Try again.\n');
    return;
  }
  const app = listApps(sim).find((a) => a.name === name);
  if (!app) {
    process.stdout.write(`No package found for ${name}\n${name}: load Error: -1\n`);
    return;
  }
  if (activeApp(sim)) {
    process.stdout.write(`Remove previously loaded accelerator, no empty slot\n${name}: load Error: -1\n`);
    return;
  }
  pause(app.sim.load_delay_ms);
  if (app.sim.load === 'hang') {
    hangForever();
    return;
  }
  if (app.sim.load === 'fail') {
    process.stdout.write(`load_accelerator: Failed to load accel ${name}\n${name}: load Error: -1\n`);
    return;
  }
  writeState(sim, { active: { name, slot: 0 } });
  writeFpga(sim, app);
  updateVartConf(sim, app);
  process.stdout.write(`${name}: loaded to slot 0\n`);
}

function remove(sim, slotText) {
  const current = activeApp(sim);
  const slot = Number(slotText);
  if (!current || current.slot !== slot) {
    process.stdout.write(`remove from slot ${slotText} returns: -1 (Error)\n`);
    return;
  }
  if (current.app.sim.unload === 'hang') {
    hangForever();
    return;
  }
  if (current.app.sim.unload === 'fail') {
    process.stdout.write(`remove from slot ${slotText} returns: -1 (Error)\n`);
    return;
  }
  writeState(sim, { active: null });
  writeFpga(sim, null);
  process.stdout.write(`remove from slot ${slotText} returns: 0 (Ok)\n`);
}
