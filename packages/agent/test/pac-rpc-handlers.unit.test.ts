import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RpcMethod } from '@mm/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlPlaneLink } from '../src/link/control-plane-link.ts';
import { createLogger } from '../src/logger.ts';
import {
  pacActivateHandler,
  pacInstallHandler,
  pacQueryHandler,
  readActivePac,
  type PacHandlerOptions,
} from '../src/pac/pac-rpc-handlers.ts';
import { RpcRegistry, type RpcContext } from '../src/rpc/rpc-registry.ts';
import { simulatedXlnxConfigPath } from '../src/simulate/xlnx-config/index.ts';
import { gzip, listTree, realPacEntries, tarArchive } from './pac-test-support.ts';

let root: string;
let uploads: string;
let options: PacHandlerOptions;
let registry: RpcRegistry;
let nextId = 1;

// The PAC handlers never touch the connection themselves: they hand the context to
// openUpload, which here reads the upload from a real file instead of over a link.
const ctx: RpcContext = { connection: undefined as unknown as ControlPlaneLink, log: createLogger('silent') };

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-pac-rpc-'));
  uploads = path.join(root, 'uploads');
  await fs.mkdir(uploads);
  const pacDir = path.join(root, 'board', 'pacs');
  options = {
    xlnxConfig: simulatedXlnxConfigPath,
    pacDir,
    env: { ...process.env, MM_PAC_DIR: pacDir, MM_SIM_STATE_DIR: path.join(root, 'board'), MM_SIM_SEED: '0' },
  };
  registry = new RpcRegistry()
    .register('pac.query', pacQueryHandler(options))
    .register('pac.activate', pacActivateHandler(options))
    .register(
      'pac.install',
      pacInstallHandler(options, async (uploadId) => createReadStream(path.join(uploads, uploadId))),
    );
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function call(method: RpcMethod, params: unknown) {
  return registry.handle({ type: 'rpc.request', id: nextId++, method, params }, ctx);
}

async function upload(name: string, archive: Buffer): Promise<string> {
  await fs.writeFile(path.join(uploads, name), archive);
  return name;
}

describe('PAC RPC handlers (through the agent RPC registry, on the simulated xlnx-config)', () => {
  it('install, query, activate', async () => {
    const uploadId = await upload('u1', gzip(await tarArchive(realPacEntries('vadd_pac', 'vadd-cfg'))));
    const installed = await call('pac.install', { upload_id: uploadId });
    expect(installed).toEqual({
      type: 'rpc.response',
      id: expect.any(Number),
      ok: true,
      result: {
        pac: 'vadd_pac',
        pacs: [
          {
            name: 'vadd-cfg',
            active: false,
            board: 'zcu104',
            assets_dir: path.join(options.pacDir, 'vadd_pac', 'hwconfig', 'cfg1', 'zcu104'),
          },
        ],
        active: null,
      },
    });

    const activated = await call('pac.activate', { pac: 'vadd-cfg' });
    expect(activated.ok).toBe(true);
    expect(activated.ok && (activated.result as { output: string }).output).toContain('Activating assets for  vadd-cfg');

    const queried = await call('pac.query', {});
    expect(queried.ok && queried.result).toMatchObject({ active: 'vadd-cfg' });
    expect(await readActivePac(options)).toBe('vadd-cfg');
  });

  it('activate of a PAC the query does not list is pac_not_found and runs no activation', async () => {
    await call('pac.install', { upload_id: await upload('u1', await tarArchive(realPacEntries('vadd_pac', 'vadd-cfg'))) });
    const answer = await call('pac.activate', { pac: 'no-such-cfg' });
    expect(answer).toMatchObject({ ok: false, error: { code: 'pac_not_found' } });
    expect(!answer.ok && answer.error.message).toContain('vadd-cfg');
    expect(await readActivePac(options)).toBeNull();
  });

  it('a malicious archive is invalid_pac_archive and leaves nothing', async () => {
    const before = await listTree(root);
    const bad = await tarArchive([
      ...realPacEntries('evil', 'evil-cfg'),
      { name: 'evil/escape', type: 'symlink', linkname: '/etc' },
    ]);
    const uploadId = await upload('bad', bad);
    const answer = await call('pac.install', { upload_id: uploadId });
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_pac_archive' } });
    expect((await listTree(root)).filter((line) => !line.startsWith('uploads'))).toEqual(
      before.filter((line) => !line.startsWith('uploads')),
    );
  });

  it('a failing xlnx-config -a answers its code and output', async () => {
    const failing = path.join(root, 'failing-xlnx-config');
    // Lists one PAC (so the name check passes) but fails to activate it.
    const table = await fs.readFile(path.join(import.meta.dirname, 'fixtures', 'pac', 'query-none-active.txt'), 'utf8');
    await fs.writeFile(path.join(root, 'table.txt'), table);
    await fs.writeFile(
      failing,
      `#!/bin/sh\nif [ "$1" = "-q" ]; then cat '${path.join(root, 'table.txt')}'; exit 0; fi\necho "* Generating boot binary..."\necho "bootgen: ERROR: cannot open system.bit" >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const failingRegistry = new RpcRegistry().register('pac.activate', pacActivateHandler({ ...options, xlnxConfig: failing }));
    const answer = await failingRegistry.handle(
      { type: 'rpc.request', id: 1, method: 'pac.activate', params: { pac: 'zcu104-platform-cfg1' } },
      ctx,
    );
    expect(answer).toMatchObject({ ok: false, error: { code: 'xlnx_config_failed' } });
    expect(!answer.ok && answer.error.message).toContain('* Generating boot binary...\nbootgen: ERROR: cannot open system.bit');
  });

  it('readActivePac answers null when xlnx-config cannot be run', async () => {
    expect(await readActivePac({ xlnxConfig: path.join(root, 'missing') })).toBeNull();
  });
});
