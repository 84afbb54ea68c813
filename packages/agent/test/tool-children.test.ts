import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runTool } from '../src/accelerator/run-tool.ts';
import { ToolChildren } from '../src/board/tool-children.ts';
import { queryPacs } from '../src/pac/xlnx-config.ts';

/** A live process (not a zombie: where nothing reaps orphans, a killed one stays one). */
async function alive(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  return stat !== undefined && !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

async function waitForFile(file: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    if (text.trim()) return text.trim();
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${file} was never written`);
}

describe('the tools an agent has running end with it', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('a board tool (own process group) and its grandchild are gone when stop() resolves, and write nothing after', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-tool-children-'));
    const pids = path.join(dir, 'pids');
    const late = path.join(dir, 'late');
    // Like xmutil running dfx-mgr-client: a tool whose grandchild would write after a while.
    const tool = path.join(dir, 'slow-tool');
    await fs.writeFile(tool, `#!/bin/sh\n(sleep 30; echo late > "${late}") &\necho "$$ $!" > "${pids}"\nwait\n`, { mode: 0o755 });
    const children = new ToolChildren();
    const run = runTool([tool], [], { timeoutMs: 60_000, children });
    const [toolPid, grandchild] = (await waitForFile(pids)).split(' ').map(Number) as [number, number];
    expect(children.count).toBe(1);

    await children.stop();
    expect(await alive(toolPid)).toBe(false);
    expect(await alive(grandchild)).toBe(false);
    expect(children.count).toBe(0);
    const answer = await run;
    expect(answer.signal ?? answer.exitCode).not.toBe(0);
    await expect(fs.access(late)).rejects.toThrow();
  });

  it('a tool that exited but left a grandchild holding its output: the grandchild is ended too', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-tool-children-'));
    const pidFile = path.join(dir, 'grandchild');
    const tool = path.join(dir, 'forks-and-exits');
    await fs.writeFile(tool, `#!/bin/sh\nsleep 30 &\necho $! > "${pidFile}"\nexit 0\n`, { mode: 0o755 });
    const children = new ToolChildren();
    const run = runTool([tool], [], { timeoutMs: 60_000, children });
    const grandchild = Number(await waitForFile(pidFile));
    expect(children.count).toBe(1);
    await children.stop();
    expect(await alive(grandchild)).toBe(false);
    await run;
    expect(children.count).toBe(0);
  });

  it('an xlnx-config that ignores SIGTERM is killed after the grace, and a tool started while stopping goes at once', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-tool-children-'));
    const pidFile = path.join(dir, 'pid');
    const stubborn = path.join(dir, 'xlnx-config');
    await fs.writeFile(stubborn, `#!/bin/sh\ntrap '' TERM\necho $$ > "${pidFile}"\nwhile :; do sleep 0.1; done\n`, { mode: 0o755 });
    const children = new ToolChildren();
    const query = queryPacs({ xlnxConfig: stubborn, timeoutMs: 60_000, children }).catch((err: unknown) => err);
    const pid = Number(await waitForFile(pidFile));

    await children.stop(300);
    expect(await alive(pid)).toBe(false);
    expect(await query).toMatchObject({ code: 'xlnx_config_failed' });

    // A probe already on its way when the agent began to stop is killed at once.
    const late = await runTool([stubborn], [], { timeoutMs: 60_000, children });
    expect(late.signal).toBe('SIGKILL');
    expect(late.timedOut).toBe(false);
  });
});
