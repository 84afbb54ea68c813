import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteDirRefusal } from '../src/device-scripts/script-operations.ts';
import { attachScriptProgram, scriptProgramOf, scriptPrograms } from '../src/device-scripts/device-script-programs.ts';
import { collectUnusedContent, sweepOrphanContent } from '../src/invocations/invocation-files.ts';
import { realDatabaseUrl } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

describe('remoteDirRefusal (the server side of MM_SCRIPTS_ROOT)', () => {
  it('refuses "." and ".." segments always, and folders outside the root the board names', () => {
    expect(remoteDirRefusal('/opt/model-manager/device-scripts/a', '/opt/model-manager/device-scripts')).toBeUndefined();
    expect(remoteDirRefusal('/opt/model-manager/device-scripts', '/opt/model-manager/device-scripts')).toBeUndefined();
    expect(remoteDirRefusal('/opt/anything', undefined)).toBeUndefined();
    expect(remoteDirRefusal('/opt/model-manager/device-scripts/../etc', undefined)).toMatch(/"\." or "\.\." segments/);
    expect(remoteDirRefusal('/opt/model-manager/device-scripts/./a', undefined)).toMatch(/segments/);
    expect(remoteDirRefusal('/opt/model-manager/device-scripts-other', '/opt/model-manager/device-scripts')).toMatch(/outside the board's scripts folder/);
    expect(remoteDirRefusal('/etc', '/opt/model-manager/device-scripts')).toMatch(/MM_SCRIPTS_ROOT/);
  });
});

describe.each(realDatabaseUrl ? (['postgres'] as const) : (['embedded'] as const))('device-script programs in the content store (%s database)', (kind) => {
  let server: TestServer;
  let scriptId: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    const res = await server.api('/api/device-scripts/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'p', device_type: 'test', script_filename: 'p.mjs', remote_dir: '/opt/model-manager/device-scripts/p', port: 9000, version: '1.0.0' }),
    });
    scriptId = (await json(res)).id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('keeps each version program; content used by a program survives collection and the orphan sweep', async () => {
    const ctx = server.ctx;
    const v1 = await ctx.files.ingest(Readable.from([Buffer.from('version one')]));
    await attachScriptProgram(ctx, scriptId, { filename: 'p.mjs', ...v1 });
    await server.api(`/api/device-scripts/${scriptId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: '1.1.0' }) });
    const v2 = await ctx.files.ingest(Readable.from([Buffer.from('version two')]));
    await attachScriptProgram(ctx, scriptId, { filename: 'p.mjs', ...v2 });
    expect((await scriptPrograms(ctx.database.db, scriptId)).map((p) => p.version)).toEqual(['1.0.0', '1.1.0']);
    expect((await scriptProgramOf(ctx.database.db, scriptId))?.sha256).toBe(v2.sha256);

    expect(await collectUnusedContent(ctx, [v1.sha256, v2.sha256])).toBe(0);
    await sweepOrphanContent(ctx, { orphanGraceMs: 0 });
    expect(await ctx.files.has(v1.sha256)).toBe(true);
    expect(await ctx.files.has(v2.sha256)).toBe(true);
    const old = await server.api(`/api/device-scripts/${scriptId}/file/?version=1.0.0`);
    expect(await old.text()).toBe('version one');

    // A new upload for the same version replaces its program and collects the old bytes.
    const v2b = await ctx.files.ingest(Readable.from([Buffer.from('version two, fixed')]));
    await attachScriptProgram(ctx, scriptId, { filename: 'p.mjs', ...v2b });
    expect(await ctx.files.has(v2.sha256)).toBe(false);
    // The entry gone, its programs go with it, and their bytes with the next sweep.
    expect((await server.api(`/api/device-scripts/${scriptId}/`, { method: 'DELETE' })).status).toBe(204);
    await sweepOrphanContent(ctx, { orphanGraceMs: 0 });
    expect(await ctx.files.has(v1.sha256)).toBe(false);
  });
});
