/**
 * Content pins across replicas (issue 46, "Exactly once across replicas"): three control
 * planes in this process on one real PostgreSQL and one store (a shared content folder, or one
 * S3 bucket), each with its own replica id, memory and listening connection, as replicas are.
 *
 * The failure found by the fault run: eight runs of one invocation ended within 2 s on three
 * replicas with identical output bytes; one replica let go of that content (it replaced the
 * invocation's output video) and its collection deleted the file while another replica held
 * the same content pinned in its own memory, so that replica's attach failed ("content … is
 * missing from the store") and its operation stayed running. Pins are now rows every
 * replica's collection honours (storage/content-pins.ts).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentPins } from '../src/db/schema.ts';
import { attachInvocationFile, discardIngestedContent } from '../src/invocations/invocation-files.ts';
import { createScratchDatabase, realDatabaseUrl } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startS3Server, type S3Server } from '../../../test/support/s3-server.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

if (!realDatabaseUrl) console.log('content-pins-replicas: skipped: several replicas need a real PostgreSQL (set DATABASE_URL)');

const bytes = (text: string) => Readable.from([Buffer.from(text)]);

describe.skipIf(!realDatabaseUrl).each(['fs', 's3'] as const)('content pins across three replicas (%s store)', (storeKind) => {
  let scratch: { url: string; drop(): Promise<void> };
  let dataDir: string;
  let s3: S3Server | undefined;
  const replicas: TestServer[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-pins-'));
    s3 = storeKind === 's3' ? await startS3Server('mm-pins') : undefined;
    for (const name of ['pins-a', 'pins-b', 'pins-c']) {
      replicas.push(
        await startTestServer(
          'postgres',
          { MM_DATA_DIR: dataDir, MM_REPLICA_ID: name, ...(s3?.env ?? {}) },
          { scratchDatabase: scratch, keep: true },
        ),
      );
    }
  }, 120_000);
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await scratch?.drop();
    await s3?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const A = () => replicas[0]!;
  const B = () => replicas[1]!;
  const C = () => replicas[2]!;
  const newInvocation = async (name: string) => {
    const res = await A().api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, description: '' }) });
    expect(res.status).toBe(201);
    return (await json(res)).id as number;
  };
  const outputOf = async (id: number) => (await json(await B().api(`/api/invocations/${id}/`))).files.output_video as { sha256: string } | null;

  it('content one replica holds pinned survives another replica letting go of the same bytes, and its attach succeeds', async () => {
    const id = await newInvocation('identical outputs');
    const output = `the same output bytes ${randomBytes(8).toString('hex')}`;
    // B's run ended first: its output is the invocation's output video.
    const onB = await B().ctx.files.ingest(bytes(output));
    await attachInvocationFile(B().ctx, id, 'output_video', { filename: 'output.mp4', ...onB });
    // A's run ended with the same bytes: stored (pinned on A), not yet attached.
    const onA = await A().ctx.files.ingest(bytes(output));
    expect(onA.sha256).toBe(onB.sha256);
    // C's run ended with other bytes and replaced the output video: X is unused now, and C collects it.
    const onC = await C().ctx.files.ingest(bytes(`other output ${randomBytes(8).toString('hex')}`));
    await attachInvocationFile(C().ctx, id, 'output_video', { filename: 'output.mp4', ...onC });
    // A's pin held: the bytes are there, and A records them.
    expect(await B().ctx.files.has(onA.sha256)).toBe(true);
    await attachInvocationFile(A().ctx, id, 'output_video', { filename: 'output.mp4', ...onA });
    expect((await outputOf(id))?.sha256).toBe(onA.sha256);
    const res = await C().api(`/api/invocations/${id}/files/output_video/`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe(output);
    // Once nobody uses them, the bytes go.
    const last = await B().ctx.files.ingest(bytes(`last ${randomBytes(8).toString('hex')}`));
    await attachInvocationFile(B().ctx, id, 'output_video', { filename: 'output.mp4', ...last });
    expect(await A().ctx.files.has(onA.sha256)).toBe(false);
    expect(await A().ctx.files.has(onC.sha256)).toBe(false);
  });

  it('a discarded copy on one replica (a run whose output is not kept) leaves another replica’s pinned copy', async () => {
    const id = await newInvocation('discarded copy');
    const output = `discarded and kept ${randomBytes(8).toString('hex')}`;
    const kept = await A().ctx.files.ingest(bytes(output));
    const discarded = await C().ctx.files.ingest(bytes(output));
    await discardIngestedContent(C().ctx, discarded.sha256);
    expect(await A().ctx.files.has(kept.sha256)).toBe(true);
    await attachInvocationFile(A().ctx, id, 'output_video', { filename: 'output.mp4', ...kept });
    expect((await outputOf(id))?.sha256).toBe(kept.sha256);
  });

  it('eight runs of one invocation ending together on three replicas with identical bytes: every attach succeeds, nothing is lost', async () => {
    const id = await newInvocation('eight runs');
    for (let round = 0; round < 4; round++) {
      const same = `round ${round}: identical output ${randomBytes(8).toString('hex')}`;
      const settled = await Promise.allSettled(
        Array.from({ length: 8 }, async (_, run) => {
          const replica = replicas[run % 3]!;
          // Runs 3 and 6 produce other bytes (and so replace the output video, collecting the shared bytes).
          const content = run === 3 || run === 6 ? `round ${round} run ${run}: other output` : same;
          const stored = await replica.ctx.files.ingest(bytes(content));
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
          if (run === 5) {
            // A run whose output is not kept (a health check): its copy is given back.
            await discardIngestedContent(replica.ctx, stored.sha256);
            return;
          }
          await attachInvocationFile(replica.ctx, id, 'output_video', { filename: 'output.mp4', ...stored });
        }),
      );
      expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
      const current = await outputOf(id);
      expect(current).not.toBeNull();
      // The output video's bytes are there and readable through any replica.
      for (const r of replicas) {
        const res = await r.api(`/api/invocations/${id}/files/output_video/`);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    }
    // No pin is left behind once the runs are done.
    expect(await A().ctx.database.db.select({ id: contentPins.id }).from(contentPins)).toEqual([]);
  });
});
