#!/usr/bin/env node
// @ts-check
/**
 * The simulated board's xlnx-config (mm-agent --simulate): plain JavaScript, no dependencies,
 * so it runs as it is from the workspace and from the bundle.
 *
 *   xlnx-config -q            list the PAC configurations, in the real tool's table format
 *   xlnx-config -a <pac>      activate one (takes effect "at the next boot": here, at once)
 *   xlnx-config -d            deactivate the active one
 *
 * Settings (environment):
 *   MM_PAC_DIR        required: the folder holding the PAC folders (the real one is
 *                     /boot/firmware/xlnx-config); never defaulted, so the simulator cannot
 *                     touch a real board's boot partition by mistake
 *   MM_SIM_STATE_DIR  where the active configuration is kept, in xlnx-config-sim-state.json
 *                     (the real tool uses /var/lib/xlnx-config); default: MM_PAC_DIR's parent
 *   MM_SIM_BOARD      the board name printed and looked for (default zcu104)
 *   MM_SIM_SEED       "0" turns seeding off. Otherwise, on a fresh simulated board (no state
 *                     file yet) whose MM_PAC_DIR holds no PAC folder, the first run creates one
 *                     sample PAC, "sim-sample-pac", so that a query shows something
 *
 * A PAC folder is laid out like a real PAC:
 *   <MM_PAC_DIR>/<pac folder>/manifest.yaml                      (optional here)
 *   <MM_PAC_DIR>/<pac folder>/hwconfig/<cfg>/manifest.yaml       name:, assets: { <board>: <dir> }
 *   <MM_PAC_DIR>/<pac folder>/hwconfig/<cfg>/<board>/...         the boot assets
 * Every <cfg> holding assets for the board is one configuration. Its name is the `name:` of
 * its manifest.yaml, like the real tool; without one, the PAC folder's name when the folder
 * has a single configuration, else "<pac folder>-<cfg>". Its assets folder is the one the
 * manifest's `assets:` maps the board to, else <cfg>/<board>.
 *
 * The -q and -a texts follow what the real tool prints (Xilinx/Canonical xlnx-config snap, as
 * quoted in public ZCU104 guides); the texts of -d, of errors and of an empty system are not
 * documented anywhere we found and are made up in the same style.
 */
import fs from 'node:fs';
import path from 'node:path';

const NAME_WIDTH = 30; // "| PAC Cfg" column of the real table: 30 characters
const RULE_WIDTH = 111; // its dashed lines
const STATE_FILE = 'xlnx-config-sim-state.json';
const SAMPLE_PAC = 'sim-sample-pac';

const USAGE = `usage: xlnx-config [-h] [-q] [-a PAC_CFG] [-d]

Simulated xlnx-config (Model Manager --simulate)

optional arguments:
  -h, --help            show this help message and exit
  -q, --query           list the PAC configurations present in the system
  -a PAC_CFG, --activate PAC_CFG
                        activate the assets of a PAC configuration
  -d, --deactivate      deactivate the active PAC configuration
`;

class UsageError extends Error {}

main();

function main() {
  try {
    const command = parseArgs(process.argv.slice(2));
    if (command.kind === 'help') {
      process.stdout.write(USAGE);
      return;
    }
    const board = process.env.MM_SIM_BOARD || 'zcu104';
    const pacDir = process.env.MM_PAC_DIR;
    if (!pacDir) fail('xlnx-config (simulated): MM_PAC_DIR is not set', 1);
    const stateDir = process.env.MM_SIM_STATE_DIR || path.dirname(path.resolve(pacDir));
    const sim = { board, pacDir: path.resolve(pacDir), statePath: path.join(path.resolve(stateDir), STATE_FILE) };

    seedFreshBoard(sim);
    if (command.kind === 'query') query(sim);
    else if (command.kind === 'activate') activate(sim, command.pac);
    else deactivate(sim);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${USAGE}xlnx-config: error: ${err.message}\n`);
      process.exit(2);
    }
    fail(`xlnx-config (simulated): ${err instanceof Error ? err.message : String(err)}`, 1);
  }
}

/** @returns {{ kind: 'help' } | { kind: 'query' } | { kind: 'activate', pac: string } | { kind: 'deactivate' }} */
function parseArgs(args) {
  const [first, second, ...rest] = args;
  if (first === undefined) throw new UsageError('one of the arguments -q -a -d is required');
  if (first === '-h' || first === '--help') return { kind: 'help' };
  if (first === '-q' || first === '--query') {
    if (second !== undefined) throw new UsageError(`unrecognized arguments: ${args.slice(1).join(' ')}`);
    return { kind: 'query' };
  }
  if (first === '-a' || first === '--activate') {
    if (second === undefined || second.startsWith('-')) throw new UsageError('argument -a/--activate: expected one argument');
    if (rest.length > 0) throw new UsageError(`unrecognized arguments: ${rest.join(' ')}`);
    return { kind: 'activate', pac: second };
  }
  if (first === '-d' || first === '--deactivate') {
    if (second !== undefined) throw new UsageError(`unrecognized arguments: ${args.slice(1).join(' ')}`);
    return { kind: 'deactivate' };
  }
  throw new UsageError(`unrecognized arguments: ${args.join(' ')}`);
}

/** -q: the real table; rows are aligned on the widest name (at least 30 characters). */
function query(sim) {
  const configs = listConfigurations(sim);
  const active = activeConfiguration(sim, configs);
  const width = Math.max(NAME_WIDTH, ...configs.map((cfg) => cfg.name.length + 1));
  const rule = '-'.repeat(RULE_WIDTH + (width - NAME_WIDTH));
  const lines = ['PAC configurations present in the system:', '', `| ${'PAC Cfg'.padEnd(width)}|Act| ${sim.board} Assets Directory`, rule];
  for (const cfg of configs) {
    lines.push(`| ${cfg.name.padEnd(width)}| ${cfg === active ? '*' : ' '} | ${cfg.assetsDir}`, rule);
  }
  if (!active) lines.push('', '* No configuration is currently activated *');
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** -a: what the real tool prints, then the new state. */
function activate(sim, name) {
  const configs = listConfigurations(sim);
  const cfg = configs.find((candidate) => candidate.name === name);
  if (!cfg) {
    const known = configs.length > 0 ? configs.map((candidate) => candidate.name).join(', ') : 'none';
    fail(
      `* ERROR: PAC configuration ${name} not found for the ${sim.board} *\n` +
        `PAC configurations present in the system: ${known}`,
      1,
    );
  }
  writeState(sim, { active: cfg.name, board: sim.board });
  const bootBinary = path.join(path.dirname(sim.pacDir), `boot${sim.board.replace(/\D/g, '')}0.bin`);
  process.stdout.write(
    [
      `Activating assets for  ${cfg.name} on the ${sim.board}`,
      `* Generating boot binary ${bootBinary}...`,
      '* Updating Multi-boot register',
      `* Updating ${sim.statePath} with ${sim.board}`,
      '',
      '* IMPORTANT: Please reboot the system for the changes to take effect.',
      '',
    ].join('\n'),
  );
}

/** -d: back to the golden boot assets. */
function deactivate(sim) {
  const active = activeConfiguration(sim, listConfigurations(sim));
  if (!active) {
    process.stdout.write('* No configuration is currently activated *\n');
    return;
  }
  writeState(sim, { active: null, board: sim.board });
  process.stdout.write(
    [
      `Deactivating assets for  ${active.name} on the ${sim.board}`,
      '* Restoring the golden boot binary',
      '* Updating Multi-boot register',
      `* Updating ${sim.statePath}`,
      '',
      '* IMPORTANT: Please reboot the system for the changes to take effect.',
      '',
    ].join('\n'),
  );
}

/** @returns {Array<{ name: string, assetsDir: string }>} in folder order */
function listConfigurations(sim) {
  const configs = [];
  for (const pac of sortedDirs(sim.pacDir)) {
    const pacPath = path.join(sim.pacDir, pac);
    const cfgs = sortedDirs(path.join(pacPath, 'hwconfig'));
    for (const cfg of cfgs) {
      const cfgPath = path.join(pacPath, 'hwconfig', cfg);
      const manifest = readManifest(path.join(cfgPath, 'manifest.yaml'));
      const assetsDir = path.join(cfgPath, manifest?.assets[sim.board] ?? sim.board);
      if (!isDirectory(assetsDir)) continue;
      const name = manifest?.name || (cfgs.length === 1 ? pac : `${pac}-${cfg}`);
      configs.push({ name, assetsDir });
    }
  }
  return configs;
}

function activeConfiguration(sim, configs) {
  const state = readState(sim);
  return configs.find((cfg) => cfg.name === state.active) ?? null;
}

/**
 * Reads the two fields of a PAC manifest.yaml the tool uses: `name:` and the `assets:` map
 * (board → folder). A line-based reader, enough for these flat files; no YAML library.
 * @returns {{ name: string | null, assets: Record<string, string> } | null}
 */
function readManifest(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const manifest = { name: null, assets: /** @type {Record<string, string>} */ ({}) };
  let inAssets = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, '');
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const top = /^([A-Za-z_][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (top) {
      inAssets = top[1] === 'assets';
      if (top[1] === 'name') manifest.name = unquote(top[2] ?? '') || null;
      continue;
    }
    const entry = /^\s+([\w.-]+)\s*:\s*(.+)$/.exec(line);
    if (inAssets && entry?.[1] && entry[2]) manifest.assets[entry[1]] = unquote(entry[2]);
  }
  return manifest;
}

function unquote(value) {
  const trimmed = value.trim();
  return /^(['"]).*\1$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}

/** @returns {{ active: string | null }} */
function readState(sim) {
  try {
    const state = JSON.parse(fs.readFileSync(sim.statePath, 'utf8'));
    return { active: typeof state?.active === 'string' ? state.active : null };
  } catch {
    return { active: null };
  }
}

/** Written to a temporary file and renamed: a concurrent reader sees the old or the new state. */
function writeState(sim, state) {
  fs.mkdirSync(path.dirname(sim.statePath), { recursive: true });
  const temporary = `${sim.statePath}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temporary, sim.statePath);
}

/** The first run on a fresh board (no state file, no PAC) creates one sample PAC. */
function seedFreshBoard(sim) {
  if (process.env.MM_SIM_SEED === '0' || fs.existsSync(sim.statePath)) return;
  if (sortedDirs(sim.pacDir).length === 0) {
    const cfgPath = path.join(sim.pacDir, SAMPLE_PAC, 'hwconfig', 'cfg1');
    const assets = path.join(cfgPath, sim.board);
    fs.mkdirSync(assets, { recursive: true });
    fs.writeFileSync(
      path.join(sim.pacDir, SAMPLE_PAC, 'manifest.yaml'),
      `name: ${SAMPLE_PAC}\ndescription: Sample PAC of the simulated board\nrevision: 1\n`,
    );
    fs.writeFileSync(
      path.join(cfgPath, 'manifest.yaml'),
      `name: ${sim.board}-sim-sample-cfg1\ndescription: Boot assets of the simulated board\nrevision: 1\nassets:\n  ${sim.board}: ${sim.board}\n`,
    );
    fs.writeFileSync(
      path.join(assets, 'bootgen.bif'),
      'the_ROM_image:\n{\n  [bootloader, destination_cpu=a53-0] fsbl.elf\n  [destination_device=pl] system.bit\n}\n',
    );
    for (const asset of ['system.bit', 'system.dtb', 'fsbl.elf', 'pmufw.elf', 'bl31.elf']) {
      fs.writeFileSync(path.join(assets, asset), `simulated ${asset}\n`);
    }
  }
  writeState(sim, { active: null, board: sim.board });
}

/** Visible sub-folders of `dir`, sorted; none when it does not exist. */
function sortedDirs(dir) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => !entry.name.startsWith('.') && (entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(path.join(dir, entry.name)))))
    .map((entry) => entry.name)
    .sort();
}

function isDirectory(file) {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/** @returns {never} */
function fail(message, status) {
  process.stderr.write(`${message}\n`);
  process.exit(status);
}
