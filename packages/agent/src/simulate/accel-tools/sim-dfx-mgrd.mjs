// @ts-check
/**
 * The simulated board's dfx-mgrd: what the daemon knows and does, shared by the simulated
 * `dfx-mgr-client`, `xmutil` and `xdputil` (plain JavaScript, no dependencies: it runs as it
 * is from the workspace and from the bundle). The real daemon keeps this in memory; the
 * simulated one keeps it in a state file, so each tool run is a real process that sees what
 * the last one did.
 *
 * Settings (environment):
 *   MM_APPS_DIR        required: the app folders (the real one is /lib/firmware/xilinx); never
 *                      defaulted, so the simulator cannot touch a real board's firmware
 *   MM_SIM_STATE_DIR   where dfx-mgr-sim-state.json is kept; default MM_APPS_DIR's parent
 *   MM_SIM_HOST_ROOT   where etc/vart.conf is written (as dfx-mgrd rewrites /etc/vart.conf);
 *                      unset: not written
 *   MM_SIM_VAI_VERSION the Vitis AI version xdputil reports (default 2.5.0)
 *   MM_SIM_APPS_SEED   "0" turns seeding off. Otherwise, on a fresh board (no state file) whose
 *                      MM_APPS_DIR holds no app, the first run creates three sample apps (below)
 *                      and loads the first, as dfx-mgrd loads its default app at boot
 *
 * One FPGA: the simulated fpgautil keeps what the programmable logic holds in
 * fpga-sim-state.json beside this daemon's state (both in MM_SIM_STATE_DIR, the simulated
 * board's folder). Loading an app writes its bitstream and overlay there, removing it takes its
 * overlay off, and a bitstream fpgautil loads over an active app ends that app (fpgautil.mjs).
 *
 * An app is a folder of MM_APPS_DIR with a shell.json whose shell_type dfx-mgrd knows. How it
 * behaves in the simulation is said by an optional sim.json in it (a real app has none):
 *   { "dpu": { "arch": "DPUCZDX8G_ISA1_B4096", "fingerprint": "0x101000016010407",
 *              "frequency_mhz": 300, "cores": 1 } | null,   the DPU it brings (xdputil)
 *     "load": "ok" | "fail" | "hang",     fail: "load Error", nothing loaded; hang: never ends
 *     "load_delay_ms": 0,                 how long a load takes
 *     "unload": "ok" | "fail" | "hang",   fail: "(Error)", and the app stays in its slot
 *     "dpu_answers": true }               false: xdputil finds no DPU although the app is loaded
 * Without sim.json an app loads and brings no DPU.
 */
import fs from 'node:fs';
import path from 'node:path';

const STATE_FILE = 'dfx-mgr-sim-state.json';
export const SHELL_TYPES = ['XRT_FLAT', 'PL_FLAT', 'PL_DFX'];

/** The sample apps of a fresh simulated board; the first is loaded at "boot". */
export const SAMPLE_APPS = [
  {
    name: 'kv260-benchmark-b4096',
    shell: { shell_type: 'XRT_FLAT', num_slots: '1' },
    xclbin: 'dpu.xclbin',
    sim: { dpu: { arch: 'DPUCZDX8G_ISA1_B4096', fingerprint: '0x101000016010407', frequency_mhz: 300, cores: 1 } },
  },
  {
    name: 'kv260-benchmark-b3136',
    shell: { shell_type: 'XRT_FLAT', num_slots: '1' },
    xclbin: 'dpu.xclbin',
    sim: { dpu: { arch: 'DPUCZDX8G_ISA1_B3136', fingerprint: '0x101000016010406', frequency_mhz: 300, cores: 2 } },
  },
  { name: 'kv260-dp', shell: { shell_type: 'PL_FLAT', num_slots: '1' }, xclbin: null, sim: { dpu: null } },
];

/**
 * @typedef {{ name: string, type: string, slots: string, dir: string, xclbin: string | null, sim: SimBehaviour }} App
 * @typedef {{ dpu: { arch: string, fingerprint: string, frequency_mhz?: number, cores?: number } | null, load: string, load_delay_ms: number, unload: string, dpu_answers: boolean }} SimBehaviour
 * @typedef {{ appsDir: string, statePath: string, hostRoot: string | undefined, vaiVersion: string }} Sim
 */

/** @returns {Sim} */
export function simFromEnv() {
  const appsDir = process.env.MM_APPS_DIR;
  if (!appsDir) {
    process.stderr.write('simulated dfx-mgrd: MM_APPS_DIR is not set\n');
    process.exit(1);
  }
  const resolved = path.resolve(appsDir);
  const stateDir = process.env.MM_SIM_STATE_DIR || path.dirname(resolved);
  const sim = {
    appsDir: resolved,
    statePath: path.join(path.resolve(stateDir), STATE_FILE),
    hostRoot: process.env.MM_SIM_HOST_ROOT ? path.resolve(process.env.MM_SIM_HOST_ROOT) : undefined,
    vaiVersion: process.env.MM_SIM_VAI_VERSION || '2.5.0',
  };
  seedFreshBoard(sim);
  return sim;
}

/** @returns {App[]} the apps dfx-mgrd knows: folders with a readable shell.json of a known type, sorted */
export function listApps(sim) {
  /** @type {App[]} */
  const apps = [];
  let names;
  try {
    names = fs.readdirSync(sim.appsDir, { withFileTypes: true });
  } catch {
    return apps;
  }
  for (const entry of names.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || entry.name.length > 64) continue;
    const dir = path.join(sim.appsDir, entry.name);
    const shell = readJson(path.join(dir, 'shell.json'));
    if (!shell || !SHELL_TYPES.includes(shell.shell_type)) continue;
    const files = fs.readdirSync(dir);
    const slots = shell.shell_type === 'PL_DFX' ? `(${Number(shell.num_pl_slots) || 1}+${Number(shell.num_aie_slots) || 0})` : '(0+0)';
    apps.push({ name: entry.name, type: shell.shell_type, slots, dir, xclbin: files.find((f) => f.toLowerCase().endsWith('.xclbin')) ?? null, sim: behaviour(readJson(path.join(dir, 'sim.json'))) });
  }
  return apps;
}

/** @returns {SimBehaviour} */
function behaviour(doc) {
  const d = doc && typeof doc === 'object' ? doc : {};
  return {
    dpu: d.dpu && typeof d.dpu === 'object' && typeof d.dpu.fingerprint === 'string' ? d.dpu : null,
    load: typeof d.load === 'string' ? d.load : 'ok',
    load_delay_ms: Number.isFinite(d.load_delay_ms) ? d.load_delay_ms : 0,
    unload: typeof d.unload === 'string' ? d.unload : 'ok',
    dpu_answers: d.dpu_answers !== false,
  };
}

/** @returns {{ active: { name: string, slot: number } | null }} */
export function readState(sim) {
  const state = readJson(sim.statePath);
  const active = state?.active;
  return { active: active && typeof active.name === 'string' ? { name: active.name, slot: Number(active.slot) || 0 } : null };
}

/** Written to a temporary file and renamed: a concurrent reader sees the old or the new state. */
export function writeState(sim, state) {
  fs.mkdirSync(path.dirname(sim.statePath), { recursive: true });
  const temporary = `${sim.statePath}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temporary, sim.statePath);
}

/** The active app, if it still exists. */
export function activeApp(sim) {
  const { active } = readState(sim);
  if (!active) return null;
  const app = listApps(sim).find((a) => a.name === active.name);
  return app ? { app, slot: active.slot } : null;
}

const FPGA_STATE_FILE = 'fpga-sim-state.json';

/** The simulated FPGA's state file, shared with the simulated fpgautil. */
function fpgaStatePath(sim) {
  return path.join(path.dirname(sim.statePath), FPGA_STATE_FILE);
}

/**
 * What the programmable logic holds after dfx-mgrd loaded `app` (its bitstream and overlay) or
 * removed the active one (`null`: the overlay is taken off, the last bitstream stays). `boot`
 * counts no load (the design a board boots with).
 */
export function writeFpga(sim, app, opts = {}) {
  const file = fpgaStatePath(sim);
  const state = readJson(file) ?? { bitstream: null, overlay: null, loads: 0 };
  if (app) {
    const files = fs.readdirSync(app.dir);
    const find = (suffix) => {
      const name = files.find((f) => f.toLowerCase().endsWith(suffix));
      return name ? path.join(app.dir, name) : null;
    };
    state.bitstream = find('.bit.bin') ?? find('.bin') ?? find('.bit') ?? state.bitstream;
    state.overlay = find('.dtbo');
    if (!opts.boot) state.loads = (Number(state.loads) || 0) + 1;
  } else {
    state.overlay = null;
  }
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temporary, file);
}

/** What dfx-mgrd does after loading an XRT_FLAT app: /etc/vart.conf names its xclbin. */
export function updateVartConf(sim, app) {
  if (!sim.hostRoot || app.type !== 'XRT_FLAT' || !app.xclbin) return;
  const file = path.join(sim.hostRoot, 'etc', 'vart.conf');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `firmware: ${path.join(app.dir, app.xclbin)}\n`);
}

/**
 * The first run on a fresh board (no state file, no app) creates the sample apps and loads the
 * first. Tools run at the same time (the agent lists apps and queries the DPU at once): one
 * seeds, holding a lock file, the others wait for its state file.
 */
function seedFreshBoard(sim) {
  if (process.env.MM_SIM_APPS_SEED === '0' || fs.existsSync(sim.statePath)) return;
  const lock = `${sim.statePath}.seeding`;
  fs.mkdirSync(path.dirname(sim.statePath), { recursive: true });
  let fd;
  try {
    fd = fs.openSync(lock, 'wx');
  } catch {
    for (let i = 0; i < 100 && !fs.existsSync(sim.statePath); i++) pause(50);
    return;
  }
  try {
    seed(sim);
  } finally {
    fs.closeSync(fd);
    fs.rmSync(lock, { force: true });
  }
}

function seed(sim) {
  const existing = (() => {
    try {
      return fs.readdirSync(sim.appsDir).filter((n) => !n.startsWith('.'));
    } catch {
      return [];
    }
  })();
  if (existing.length === 0) {
    for (const sample of SAMPLE_APPS) {
      const dir = path.join(sim.appsDir, sample.name);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'shell.json'), `${JSON.stringify(sample.shell, null, 2)}\n`);
      fs.writeFileSync(path.join(dir, `${sample.name}.bit.bin`), `simulated bitstream of ${sample.name}\n`);
      fs.writeFileSync(path.join(dir, `${sample.name}.dtbo`), `simulated overlay of ${sample.name}\n`);
      if (sample.xclbin) fs.writeFileSync(path.join(dir, sample.xclbin), `simulated xclbin of ${sample.name}\n`);
      fs.writeFileSync(path.join(dir, 'sim.json'), `${JSON.stringify(sample.sim, null, 2)}\n`);
    }
    writeState(sim, { active: { name: SAMPLE_APPS[0].name, slot: 0 } });
    const first = listApps(sim).find((a) => a.name === SAMPLE_APPS[0].name);
    if (first) {
      updateVartConf(sim, first);
      writeFpga(sim, first, { boot: true });
    }
    return;
  }
  writeState(sim, { active: null });
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Blocks this process for `ms` (the tools are short synchronous programs). */
export function pause(ms) {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Never ends (until killed), as a load that hangs in the FPGA manager. */
export function hangForever() {
  setInterval(() => {}, 1 << 30);
}
