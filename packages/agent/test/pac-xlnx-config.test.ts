import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installPacArchive } from '../src/pac/pac-archive.ts';
import { XlnxConfigError } from '../src/pac/pac-errors.ts';
import { activatePac, queryPacs, runReboot, splitCommandLine } from '../src/pac/xlnx-config.ts';
import { parseXlnxConfigQuery } from '../src/pac/xlnx-config-output.ts';
import { simulatedXlnxConfigPath } from '../src/simulate/xlnx-config/index.ts';
import { flatPacEntries, realPacEntries, tarArchive, type TarEntrySpec } from './pac-test-support.ts';

const RULE = '-'.repeat(111);

let root: string;
let pacDir: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-sim-xlnx-'));
  pacDir = path.join(root, 'firmware', 'xlnx-config');
  await fs.mkdir(pacDir, { recursive: true });
  env = { ...process.env, MM_PAC_DIR: pacDir, MM_SIM_STATE_DIR: path.join(root, 'state'), MM_SIM_SEED: '0' };
  delete env.MM_SIM_BOARD;
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the simulator as a real process, through its shebang (no `node` in front). */
function simulator(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(simulatedXlnxConfigPath, args, { env: { ...env, ...extraEnv } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function install(entries: TarEntrySpec[]): Promise<string> {
  const result = await installPacArchive(Readable.from([await tarArchive(entries)]), { pacDir });
  return result.pac;
}

/** A tiny executable shell script in the sandbox. */
async function script(name: string, body: string): Promise<string> {
  const file = path.join(root, name);
  await fs.writeFile(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

describe('the simulated xlnx-config', () => {
  it('-q with no PAC prints the table header and no configuration active', async () => {
    const run = await simulator(['-q']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        'PAC configurations present in the system:',
        '',
        '| PAC Cfg                       |Act| zcu104 Assets Directory',
        RULE,
        '',
        '* No configuration is currently activated *',
        '',
      ].join('\n'),
    );
    expect(parseXlnxConfigQuery(run.stdout)).toEqual({ pacs: [], active: null });
  });

  it('seeds one sample PAC on a fresh board', async () => {
    const run = await simulator(['-q'], { MM_SIM_SEED: undefined });
    expect(run.code).toBe(0);
    const result = parseXlnxConfigQuery(run.stdout);
    expect(result.pacs).toEqual([
      {
        name: 'zcu104-sim-sample-cfg1',
        active: false,
        board: 'zcu104',
        assets_dir: path.join(pacDir, 'sim-sample-pac', 'hwconfig', 'cfg1', 'zcu104'),
      },
    ]);
    await fs.access(path.join(pacDir, 'sim-sample-pac', 'manifest.yaml'));
    // only once: removing the sample leaves an empty board
    await fs.rm(path.join(pacDir, 'sim-sample-pac'), { recursive: true });
    expect(parseXlnxConfigQuery((await simulator(['-q'], { MM_SIM_SEED: undefined })).stdout).pacs).toEqual([]);
  });

  it('lists installed PACs in the real format, activates one, deactivates it', async () => {
    await install(realPacEntries('vadd_pac', 'vadd-cfg'));
    await install(flatPacEntries('flat-pac'));

    const listed = await simulator(['-q']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      [
        'PAC configurations present in the system:',
        '',
        '| PAC Cfg                       |Act| zcu104 Assets Directory',
        RULE,
        `| flat-pac                      |   | ${pacDir}/flat-pac/hwconfig/cfg1/zcu104`,
        RULE,
        `| vadd-cfg                      |   | ${pacDir}/vadd_pac/hwconfig/cfg1/zcu104`,
        RULE,
        '',
        '* No configuration is currently activated *',
        '',
      ].join('\n'),
    );

    const activation = await simulator(['-a', 'vadd-cfg']);
    expect(activation.code).toBe(0);
    expect(activation.stdout).toMatch(/^Activating assets for {2}vadd-cfg on the zcu104\n/);
    expect(activation.stdout).toMatch(/\* IMPORTANT: Please reboot the system for the changes to take effect\.\n$/);

    const afterActivation = await simulator(['-q']);
    expect(afterActivation.stdout).toContain(`| vadd-cfg                      | * | ${pacDir}/vadd_pac/hwconfig/cfg1/zcu104\n`);
    expect(afterActivation.stdout).not.toContain('No configuration is currently activated');
    expect(parseXlnxConfigQuery(afterActivation.stdout).active).toBe('vadd-cfg');

    const deactivation = await simulator(['-d']);
    expect(deactivation.code).toBe(0);
    expect(parseXlnxConfigQuery((await simulator(['-q'])).stdout).active).toBeNull();
  });

  it('-a of an unknown PAC exits non-zero and changes nothing', async () => {
    await install(realPacEntries('vadd_pac', 'vadd-cfg'));
    await simulator(['-a', 'vadd-cfg']);
    const run = await simulator(['-a', 'no-such-cfg']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('no-such-cfg');
    expect(parseXlnxConfigQuery((await simulator(['-q'])).stdout).active).toBe('vadd-cfg');
  });

  it('rejects bad arguments like argparse does (status 2)', async () => {
    expect((await simulator([])).code).toBe(2);
    expect((await simulator(['-z'])).code).toBe(2);
    expect((await simulator(['-a'])).code).toBe(2);
  });

  it('refuses to run without MM_PAC_DIR', async () => {
    const run = await simulator(['-q'], { MM_PAC_DIR: '' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('MM_PAC_DIR');
  });

  it('widens the name column for a long name, keeping the table aligned', async () => {
    const long = 'zcu104-vitis-ai-dpu-b4096-with-video-codec-unit-cfg';
    await install(realPacEntries('long_pac', long));
    await install(realPacEntries('short_pac', 'short'));
    const run = await simulator(['-q']);
    const lines = run.stdout.split('\n');
    const header = lines.find((line) => line.startsWith('| PAC Cfg'));
    const rows = lines.filter((line) => line.startsWith('| ') && line !== header);
    expect(header).toBe(`| ${'PAC Cfg'.padEnd(long.length + 1)}|Act| zcu104 Assets Directory`);
    expect(rows.map((row) => row.indexOf('|', 1))).toEqual([long.length + 3, long.length + 3]);
    expect(parseXlnxConfigQuery(run.stdout).pacs.map((pac) => pac.name)).toEqual([long, 'short']);
  });

  it('shows the board of MM_SIM_BOARD and only the configurations with assets for it', async () => {
    await install(realPacEntries('kv_pac', 'kv260-smartcam', { board: 'kv260' }));
    await install(realPacEntries('zcu_pac', 'zcu-only'));
    const run = await simulator(['-q'], { MM_SIM_BOARD: 'kv260' });
    expect(run.stdout).toContain('|Act| kv260 Assets Directory\n');
    expect(parseXlnxConfigQuery(run.stdout).pacs).toEqual([
      { name: 'kv260-smartcam', active: false, board: 'kv260', assets_dir: `${pacDir}/kv_pac/hwconfig/cfg1/kv260` },
    ]);
  });
});

describe('queryPacs / activatePac driving the simulator through MM_XLNX_CONFIG', () => {
  const options = () => ({ xlnxConfig: simulatedXlnxConfigPath, env });

  it('query, activate, query', async () => {
    expect(await queryPacs(options())).toEqual({ pacs: [], active: null });
    await install(realPacEntries('vadd_pac', 'vadd-cfg'));
    await install(realPacEntries('dpu_pac', 'dpu-cfg'));

    const before = await queryPacs(options());
    expect(before.pacs.map((pac) => [pac.name, pac.active])).toEqual([
      ['dpu-cfg', false],
      ['vadd-cfg', false],
    ]);
    expect(before.active).toBeNull();

    const { output } = await activatePac('dpu-cfg', options());
    expect(output).toContain('Activating assets for  dpu-cfg on the zcu104');

    const after = await queryPacs(options());
    expect(after.active).toBe('dpu-cfg');
    expect(after.pacs.find((pac) => pac.name === 'dpu-cfg')).toEqual({
      name: 'dpu-cfg',
      active: true,
      board: 'zcu104',
      assets_dir: `${pacDir}/dpu_pac/hwconfig/cfg1/zcu104`,
    });
  });

  it('activatePac of an unknown PAC throws xlnx_config_failed carrying the output', async () => {
    const error = await activatePac('no-such-cfg', options()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(XlnxConfigError);
    expect((error as XlnxConfigError).code).toBe('xlnx_config_failed');
    expect((error as XlnxConfigError).output).toContain('no-such-cfg');
    expect((error as XlnxConfigError).message).toContain('exited with status 1');
  });

  it('activatePac refuses a name xlnx-config would read as an option, without running it', async () => {
    await install(realPacEntries('vadd_pac', 'vadd-cfg'));
    await activatePac('vadd-cfg', options());
    for (const name of ['-d', '--help', '']) {
      const error = await activatePac(name, options()).catch((err: unknown) => err);
      expect((error as XlnxConfigError).code).toBe('invalid_pac_name');
    }
    expect((await queryPacs(options())).active).toBe('vadd-cfg');
  });

  it('a missing xlnx-config is xlnx_config_unavailable', async () => {
    const error = await queryPacs({ xlnxConfig: path.join(root, 'no-such-xlnx-config') }).catch((err: unknown) => err);
    expect((error as XlnxConfigError).code).toBe('xlnx_config_unavailable');
  });

  it('a failing -q is xlnx_config_failed with its output', async () => {
    const failing = await script('failing-xlnx-config', 'echo "Error: must be run as root" >&2\nexit 3');
    const error = await queryPacs({ xlnxConfig: failing }).catch((err: unknown) => err);
    expect((error as XlnxConfigError).code).toBe('xlnx_config_failed');
    expect((error as XlnxConfigError).output).toBe('Error: must be run as root\n');
  });

  it('an unrecognised -q output is xlnx_config_output_unrecognised', async () => {
    const odd = await script('odd-xlnx-config', 'echo "Something else entirely"');
    const error = await queryPacs({ xlnxConfig: odd }).catch((err: unknown) => err);
    expect((error as XlnxConfigError).code).toBe('xlnx_config_output_unrecognised');
  });

  it('a command that hangs is killed at its timeout: xlnx_config_timeout', async () => {
    const hanging = await script('hanging-xlnx-config', 'echo started\nexec sleep 300');
    const error = await queryPacs({ xlnxConfig: hanging, timeoutMs: 300 }).catch((err: unknown) => err);
    expect((error as XlnxConfigError).code).toBe('xlnx_config_timeout');
    expect((error as XlnxConfigError).output).toBe('started\n');
  });

  it('passes its arguments as an argument list, never through a shell', async () => {
    const record = path.join(root, 'args.txt');
    const recorder = await script('recording-xlnx-config', `printf '%s\\n' "$@" > '${record}'`);
    await activatePac('name with spaces; touch pwned', { xlnxConfig: recorder });
    expect(await fs.readFile(record, 'utf8')).toBe('-a\nname with spaces; touch pwned\n');
    await expect(fs.access(path.join(root, 'pwned'))).rejects.toThrow();
  });
});

describe('runReboot', () => {
  it('splits the command line on whitespace and runs it without a shell', async () => {
    const record = path.join(root, 'reboot-args.txt');
    const reboot = await script('fake-reboot', `printf '%s\\n' "$@" > '${record}'\necho rebooting`);
    const result = await runReboot(`  ${reboot}   --now  $HOME  `);
    expect(result.output).toBe('rebooting\n');
    expect(await fs.readFile(record, 'utf8')).toBe('--now\n$HOME\n');
  });

  it('a failing reboot command is reboot_failed', async () => {
    const reboot = await script('failing-reboot', 'echo "Failed to reboot: Access denied" >&2\nexit 1');
    const error = await runReboot(reboot).catch((err: unknown) => err);
    expect((error as XlnxConfigError).code).toBe('reboot_failed');
    expect((error as XlnxConfigError).output).toContain('Access denied');
  });

  it('an empty or missing reboot command is reboot_failed', async () => {
    expect(((await runReboot('   ').catch((err: unknown) => err)) as XlnxConfigError).code).toBe('reboot_failed');
    const missing = path.join(root, 'no-such-reboot');
    expect(((await runReboot(missing).catch((err: unknown) => err)) as XlnxConfigError).code).toBe('reboot_failed');
  });

  it('splitCommandLine', () => {
    expect(splitCommandLine('systemctl reboot')).toEqual(['systemctl', 'reboot']);
    expect(splitCommandLine('\tsudo  -n\nreboot ')).toEqual(['sudo', '-n', 'reboot']);
    expect(splitCommandLine('')).toEqual([]);
  });
});
