#!/usr/bin/env node
// @ts-check
/**
 * The simulated board's xmutil (mm-agent --simulate): like the real one (Xilinx/xmutil, a
 * Python script), `listapps`, `loadapp <name>` and `unloadapp [slot]` run
 * `dfx-mgr-client -listPackage | -load <name> | -remove [slot]` (here the simulated one beside
 * this file) and exit 0 whatever it did: the real script never looks at the status. Its
 * other commands are not simulated.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const client = fileURLToPath(new URL('./dfx-mgr-client.mjs', import.meta.url));
const COMMANDS = ['boardid', 'bootfw_status', 'bootfw_update', 'getpkgs', 'listapps', 'loadapp', 'unloadapp', 'xlnx_platformstats', 'ddrqos', 'axiqos', 'pwrctl', 'desktop_disable', 'desktop_enable', 'dp_unbind', 'dp_bind'];

const [command, ...args] = process.argv.slice(2);
if (command === undefined || !COMMANDS.includes(command)) {
  process.stderr.write(
    `usage: xmutil [-h] {${COMMANDS.join(',')}} ...\nxmutil: error: argument cmd: invalid choice: ${JSON.stringify(command ?? '')} (choose from ${COMMANDS.map((c) => `'${c}'`).join(', ')})\n`,
  );
  process.exit(2);
}
const forward = { listapps: ['-listPackage'], loadapp: ['-load', ...args], unloadapp: ['-remove', ...args] }[command];
if (forward === undefined) {
  process.stdout.write(`xmutil ${command}: not simulated\n`);
} else {
  // The child shares this process group: a hang in it is a hang of xmutil, and a kill of the group reaches both.
  spawnSync(process.execPath, [client, ...forward], { stdio: 'inherit' });
}
