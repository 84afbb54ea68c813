import { execFileSync } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from '../src/command-line.ts';
import { ConfigError, loadAgentConfig, noLoginShellRefusal } from '../src/config.ts';

describe('splitCommandLine', () => {
  it('splits words, keeps quoted spaces and escapes, runs no shell', () => {
    expect(splitCommandLine('  /opt/run.sh --fast   x ')).toEqual(['/opt/run.sh', '--fast', 'x']);
    expect(splitCommandLine(`python3 "/opt/my models/run.py" 'a b' c\\ d`)).toEqual(['python3', '/opt/my models/run.py', 'a b', 'c d']);
    expect(splitCommandLine(`echo "say \\"hi\\"" '$HOME' ""`)).toEqual(['echo', 'say "hi"', '$HOME', '']);
    expect(splitCommandLine('a;b | c > d')).toEqual(['a;b', '|', 'c', '>', 'd']);
  });

  it('rejects unterminated quotes', () => {
    expect(() => splitCommandLine('run "x')).toThrow(/unterminated/);
    expect(() => splitCommandLine("run 'x")).toThrow(/unterminated/);
  });
});

describe('loadAgentConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: '/opt/run "a b"' }, { simulate: false });
    expect(c.connectUrl).toBe('ws://127.0.0.1:8000/api/agent/connect/');
    expect(c.agentDir).toBe('/var/lib/mm-agent');
    expect(c.runner).toEqual(['/opt/run', 'a b']);
    expect(c.runTimeoutMs).toBe(3_600_000);
    expect(c.cacheMaxBytes).toBe(20 * 1024 ** 3);
    expect(c.xlnxConfig).toBe('xlnx-config');
    expect(c.reboot).toBe('systemctl reboot');
    expect(c.pacDir).toBe('/boot/firmware/xlnx-config');
    expect(c.heartbeatIntervalMs).toBe(15_000);
    expect(c.heartbeatTimeoutMs).toBe(45_000);
    expect(c.bootIdFile).toBe('/proc/sys/kernel/random/boot_id');
    expect(c.logLevel).toBe('info');
  });

  it('turns https into wss and keeps a path prefix', () => {
    const c = loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_SERVER_URL: 'https://mm.example.org/base/' }, { simulate: false });
    expect(c.connectUrl).toBe('wss://mm.example.org/base/api/agent/connect/');
  });

  it('names every bad variable, and never echoes the token', () => {
    let error: unknown;
    try {
      loadAgentConfig({ MM_SERVER_URL: 'ftp://x', MM_RUN_TIMEOUT_S: '-3', MM_CACHE_MAX_BYTES: 'lots', LOG_LEVEL: 'loud' }, { simulate: false });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as Error).message;
    for (const name of ['MM_BOARD_TOKEN', 'MM_SERVER_URL', 'MM_RUN_TIMEOUT_S', 'MM_CACHE_MAX_BYTES', 'LOG_LEVEL']) expect(text).toContain(name);
    expect(() => loadAgentConfig({ MM_BOARD_TOKEN: 'secret-token', MM_RUNNER: 'run "x' }, { simulate: false })).toThrow(/MM_RUNNER.*unterminated/);
  });

  it('runs mm-runner when MM_RUNNER is unset on a real board, with MM_PYTHON (default python3)', () => {
    const c = loadAgentConfig({ MM_BOARD_TOKEN: 't' }, { simulate: false });
    expect(c.runner).toHaveLength(1);
    expect(c.runner?.[0]).toMatch(/mm-runner\/bin\/mm-runner$/);
    expect(c.runnerIsDefault).toBe(true);
    expect(c.python).toBe('python3');
    expect(c.fpgautil).toEqual(['fpgautil']);
    const d = loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: '/opt/run', MM_PYTHON: '/usr/bin/python3', MM_FPGAUTIL: 'sudo -n fpgautil' }, { simulate: false });
    expect(d.runner).toEqual(['/opt/run']);
    expect(d.runnerIsDefault).toBe(false);
    expect(d.python).toBe('/usr/bin/python3');
    expect(d.fpgautil).toEqual(['sudo', '-n', 'fpgautil']);
  });

  it('needs no MM_RUNNER with --simulate and defaults to the simulated board', () => {
    const c = loadAgentConfig(
      { MM_BOARD_TOKEN: 't' },
      { simulate: true, simulatedDefaults: (dir) => ({ runner: ['sim'], xlnxConfig: '/sim/xlnx-config', pacDir: path.join(dir, 'pacs'), bootIdFile: path.join(dir, 'boot') }) },
    );
    expect(c.agentDir).toBe(path.resolve('./data/agent'));
    expect(c.runner).toEqual(['sim']);
    expect(c.xlnxConfig).toBe('/sim/xlnx-config');
    expect(c.pacDir).toBe(path.resolve('./data/agent/pacs'));
    expect(c.bootIdFile).toBe(path.resolve('./data/agent/boot'));
    // Explicit settings still win.
    const d = loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'mine', MM_AGENT_DIR: '/tmp/a' }, { simulate: true, simulatedDefaults: () => ({ runner: ['sim'], xlnxConfig: 'x', pacDir: '/p', bootIdFile: '/b' }) });
    expect(d.runner).toEqual(['mine']);
    expect(d.agentDir).toBe('/tmp/a');
  });
});

describe('the board token and the runner user', () => {
  it('takes the token out of the environment it read it from, so no child inherits it', () => {
    const saved = { token: process.env.MM_BOARD_TOKEN, runner: process.env.MM_RUNNER };
    process.env.MM_BOARD_TOKEN = 'secret-board-token';
    process.env.MM_RUNNER = '/bin/true';
    try {
      const c = loadAgentConfig(process.env, { simulate: false });
      expect(c.boardToken).toBe('secret-board-token');
      expect(process.env).not.toHaveProperty('MM_BOARD_TOKEN');
      expect(execFileSync('/usr/bin/env', { encoding: 'utf8' })).not.toContain('secret-board-token');
    } finally {
      for (const [name, value] of [['MM_BOARD_TOKEN', saved.token], ['MM_RUNNER', saved.runner]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    // A load that fails leaves the environment as it was.
    const env: Record<string, string | undefined> = { MM_BOARD_TOKEN: 't', MM_RUN_TIMEOUT_S: 'never' };
    expect(() => loadAgentConfig(env, { simulate: false })).toThrow(ConfigError);
    expect(env.MM_BOARD_TOKEN).toBe('t');
  });

  it('reads the token from MM_BOARD_TOKEN_FILE (never both), so it is never in the environment at all', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-token-'));
    try {
      const file = path.join(dir, 'token');
      await fsp.writeFile(file, 'from-a-file\n', { mode: 0o600 });
      const env: Record<string, string | undefined> = { MM_BOARD_TOKEN_FILE: file, MM_RUNNER: 'x' };
      expect(loadAgentConfig(env, { simulate: false }).boardToken).toBe('from-a-file');
      expect(env).not.toHaveProperty('MM_BOARD_TOKEN_FILE');
      expect(() => loadAgentConfig({ MM_BOARD_TOKEN_FILE: file, MM_BOARD_TOKEN: 't', MM_RUNNER: 'x' }, { simulate: false })).toThrow(/not both/);
      expect(() => loadAgentConfig({ MM_BOARD_TOKEN_FILE: path.join(dir, 'missing'), MM_RUNNER: 'x' }, { simulate: false })).toThrow(/MM_BOARD_TOKEN_FILE: cannot read/);
      expect(() => loadAgentConfig({ MM_RUNNER: 'x' }, { simulate: false })).toThrow(/MM_BOARD_TOKEN: is required/);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it('enrolls with MM_PROVISIONING_KEY only while the token file holds no token, and never passes the key on', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-key-'));
    try {
      const file = path.join(dir, 'token');
      const env: Record<string, string | undefined> = { MM_BOARD_TOKEN_FILE: file, MM_PROVISIONING_KEY: 'mmk_k', MM_RUNNER: 'x' };
      const enrolling = loadAgentConfig(env, { simulate: false });
      expect(enrolling.enrollment).toMatchObject({ key: 'mmk_k', tokenFile: file, machineIdFiles: ['/etc/machine-id', path.join(enrolling.agentDir, 'machine-id')] });
      expect(env).not.toHaveProperty('MM_PROVISIONING_KEY');
      // A token kept: the key is not used.
      await fsp.writeFile(file, 'kept\n', { mode: 0o600 });
      const kept = loadAgentConfig({ MM_BOARD_TOKEN_FILE: file, MM_PROVISIONING_KEY: 'mmk_k', MM_RUNNER: 'x' }, { simulate: false });
      expect(kept.boardToken).toBe('kept');
      expect(kept.enrollment).toBeUndefined();
      // Nowhere to keep the token.
      expect(() => loadAgentConfig({ MM_PROVISIONING_KEY: 'mmk_k', MM_RUNNER: 'x' }, { simulate: false })).toThrow(/MM_PROVISIONING_KEY: needs MM_BOARD_TOKEN_FILE/);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it('resolves MM_RUNNER_USER to its uid and gid, and refuses unknown users and root', () => {
    const c = loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_RUNNER_USER: 'nobody' }, { simulate: false });
    const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }));
    expect(c.runnerUser).toMatchObject({ name: 'nobody', uid });
    expect(loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x' }, { simulate: false }).runnerUser).toBeUndefined();
    expect(() => loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_RUNNER_USER: 'no-such-user-here' }, { simulate: false })).toThrow(/MM_RUNNER_USER: no such user/);
    expect(() => loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_RUNNER_USER: 'root' }, { simulate: false })).toThrow(/MM_RUNNER_USER: must not be root/);
    expect(() => loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_RUNNER_USER: '-u0' }, { simulate: false })).toThrow(/not a user name/);
  });

  it('relays to the GPIO script port only by default; MM_SCRIPT_PORTS sets the list', () => {
    expect(loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x' }, { simulate: false }).scriptPorts).toEqual([8765]);
    expect(loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_SCRIPT_PORTS: '8765, 9000 9000' }, { simulate: false }).scriptPorts).toEqual([8765, 9000]);
    for (const bad of ['0', '65536', 'http', '80,x']) {
      expect(() => loadAgentConfig({ MM_BOARD_TOKEN: 't', MM_RUNNER: 'x', MM_SCRIPT_PORTS: bad }, { simulate: false })).toThrow(/MM_SCRIPT_PORTS/);
    }
  });
});

describe("terminals as the agent's own user", () => {
  it("are refused, saying why, when that user has no login shell (the package's mm-agent)", () => {
    expect(noLoginShellRefusal('mm-agent:x:998:998::/var/lib/mm-agent:/usr/sbin/nologin')).toMatch(/^The agent's own user mm-agent has no login shell \(\/usr\/sbin\/nologin\): name a board user in MM_TERMINAL_USER/);
    expect(noLoginShellRefusal('svc:x:997:997::/:/bin/false')).toMatch(/svc has no login shell \(\/bin\/false\)/);
  });
  it('are offered when it has one, or when nothing is known of it', () => {
    expect(noLoginShellRefusal('ubuntu:x:1000:1000:Ubuntu:/home/ubuntu:/bin/bash')).toBeUndefined();
    expect(noLoginShellRefusal('odd:x:1001:1001::/home/odd:/usr/local/bin/falsetto')).toBeUndefined();
    expect(noLoginShellRefusal(undefined)).toBeUndefined();
    expect(noLoginShellRefusal('broken line')).toBeUndefined();
  });
});
