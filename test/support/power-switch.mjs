#!/usr/bin/env node
/**
 * A power switch for simulated boards, run by pdudaemon's `localcmdline` driver in the power
 * tests (test/support/pdudaemon.ts):
 *
 *   node power-switch.mjs <on|off> <outlet> <dir>
 *
 * `<dir>/outlet-<n>.json` says what is plugged into outlet n: `{ argv, env, cwd, marker, log }`
 * of a board's agent. `on` starts it (unless it runs), detached, its output appended to `log`;
 * `off` is a power cut: every process whose environment holds `MM_E2E_MARKER=<marker>` (the
 * agent and its runs) is killed with SIGKILL, no goodbye, and it returns once they are dead
 * (exit 1 if they outlive 30 s). Each command is appended to
 * `<dir>/switch.log` (`<iso time> <outlet> <on|off>`), so a test sees what pdudaemon did.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [command, outlet, dir] = process.argv.slice(2);
if (!['on', 'off'].includes(command ?? '') || !outlet || !dir) {
  process.stderr.write('usage: power-switch.mjs <on|off> <outlet> <dir>\n');
  process.exit(2);
}
fs.appendFileSync(path.join(dir, 'switch.log'), `${new Date().toISOString()} ${outlet} ${command}\n`);
const specFile = path.join(dir, `outlet-${outlet}.json`);
if (!fs.existsSync(specFile)) process.exit(0); // nothing plugged in
const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));

/** Live (not zombie) processes whose environment holds the marker. */
function marked() {
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = fs.readFileSync(`/proc/${name}/environ`, 'latin1');
      if (!env.split('\0').includes(`MM_E2E_MARKER=${spec.marker}`)) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

if (command === 'off') {
  for (const pid of marked()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  // A power cut is over when the switch says so: wait until the killed processes are dead
  // (a process in uninterruptible I/O dies only when that ends), so an `on` right after (a
  // cycle's) never takes a dying agent for a running one and skips the start.
  const deadline = Date.now() + 30_000;
  while (marked().length > 0) {
    if (Date.now() > deadline) {
      process.stderr.write(`power-switch: outlet ${outlet} still has live processes 30 s after the cut: ${marked().join(' ')}\n`);
      process.exit(1);
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  process.exit(0);
}
if (marked().length > 0) process.exit(0); // already on
const out = fs.openSync(spec.log, 'a');
const child = spawn(spec.argv[0], spec.argv.slice(1), {
  cwd: spec.cwd,
  env: { ...spec.env, MM_E2E_MARKER: spec.marker },
  stdio: ['ignore', out, out],
  detached: true,
});
child.unref();
process.exit(0);
