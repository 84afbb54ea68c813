/**
 * Rollouts end to end (docs/rollouts.md): a real control plane on PostgreSQL (embedded when
 * there is none) and four real simulated agents; each step is an ordinary operation.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gzip, realPacEntries, tarArchive } from '../../packages/agent/test/pac-test-support.ts';
import { upload } from '../faults/fault-support.ts';
import { cliHome } from '../support/cli.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import { getBoard, SAMPLE_PAC, startBoard, startPacServer, stopBoard, type Board } from './pacs-support.ts';
import { createRollout, followRollout, getRollout, newInvocation, post, waitForRollout } from './rollouts-support.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

describe('rollouts over four simulated boards', () => {
  let server: TestServer;
  const boards: Board[] = [];

  beforeAll(async () => {
    server = await startPacServer(realDatabaseUrl ? 'postgres' : 'embedded');
    // Named so the selector's order (by name) puts the one whose activation fails second.
    const specs: Array<[string, Record<string, string>]> = [
      ['b1', {}],
      ['b2', { MM_SIM_REBOOT_FALLBACK: '1' }],
      ['b3', {}],
      ['b4', {}],
    ];
    boards.push(...(await Promise.all(specs.map(([name, env]) => startBoard(server, name, { MM_SIM_REBOOT_DELAY_MS: '300', ...env })))));
  });
  afterAll(async () => {
    await Promise.all(boards.map((b) => stopBoard(b)));
    await server?.stop();
  });

  it('refuses what it cannot do with a clear 4xx and creates nothing', async () => {
    const none = await post(server, '/api/rollouts/', { kind: 'pac_activate', board_selector: { camera: 'yes' }, params: { pac: SAMPLE_PAC } });
    expect(none.status).toBe(400);
    expect(await json(none)).toMatchObject({ code: 'no_matching_board' });
    const noInvocation = await post(server, '/api/rollouts/', { kind: 'execute', board_selector: {} });
    expect(noInvocation.status).toBe(400);
    expect((await json(noInvocation)).errors).toEqual([expect.objectContaining({ field: 'invocation_id' })]);
    const noPac = await post(server, '/api/rollouts/', { kind: 'pac_activate', board_selector: {} });
    expect(noPac.status).toBe(400);
    const script = await post(server, '/api/rollouts/', { kind: 'script_deploy', board_selector: {}, params: { script_id: '00000000-0000-4000-8000-000000000000' } });
    expect([400, 404]).toContain(script.status);
    const badKind = await post(server, '/api/rollouts/', { kind: 'reboot', board_selector: {} });
    expect(badKind.status).toBe(400);
    expect((await json(await server.api('/api/rollouts/'))).total).toBe(0);
    expect((await server.api('/api/rollouts/999/')).status).toBe(404);
    expect((await server.api(`/api/rollouts/999/boards/${boards[0]!.id}/output/`)).status).toBe(404);
  });

  it('an execute rollout runs on every board at once and collects each result', async () => {
    const invocationId = await newInvocation(server, 'everywhere', 0.2);
    const created = await createRollout(server, { kind: 'execute', board_selector: {}, invocation_id: invocationId });
    expect(created).toMatchObject({ kind: 'execute', status: 'running', invocation_id: invocationId });
    expect(created.boards.map((b) => b.board_name)).toEqual(['b1', 'b2', 'b3', 'b4']);
    // Every board started at once: each has its operation already.
    expect(created.boards.every((b) => b.operation_id !== null)).toBe(true);
    const events = followRollout(server, created.id);

    const done = await waitForRollout(server, created.id, (r) => r.finished_at !== null);
    expect(done.status).toBe('succeeded');
    expect(done.counts).toMatchObject({ succeeded: 4, failed: 0, pending: 0, skipped: 0 });
    for (const b of done.boards) {
      expect(b.status).toBe('succeeded');
      expect(b.run_ms).toBeGreaterThan(0);
      // Each step is an ordinary operation named to its board.
      const op = await json(await server.api(`/api/operations/${b.operation_id}/`));
      expect(op).toMatchObject({ kind: 'execute', status: 'succeeded', board_id: b.board_id, invocation_id: invocationId });
      // Each board's output is downloadable, though the invocation keeps only the last one.
      const video = await server.api(`/api/rollouts/${created.id}/boards/${b.board_id}/output/`);
      expect(video.status).toBe(200);
      const bytes = Buffer.from(await video.arrayBuffer());
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(op.result.output_video.sha256);
    }
    const seen = await events;
    expect(seen[0]!.event).toBe('status');
    expect(seen.at(-1)!.event).toBe('end');
    expect(JSON.parse(seen.at(-1)!.data!)).toMatchObject({ id: created.id, status: 'succeeded' });
    expect(seen.filter((b) => b.event === 'board').length).toBeGreaterThanOrEqual(1);
    // Listed, and filtered.
    const listed = await json(await server.api('/api/rollouts/?kind=execute&status=succeeded'));
    expect(listed.rollouts.map((r: { id: number }) => r.id)).toContain(created.id);
    expect((await json(await server.api('/api/rollouts/?kind=pac_activate'))).total).toBe(0);
  });

  it('a PAC activation in phases of 1 stops by itself after the 2nd board fails: the others are skipped and keep their PAC', async () => {
    const before = await Promise.all(boards.map((b) => getBoard(server, b.id)));
    expect(before.map((b) => b.active_pac)).toEqual([null, null, null, null]);
    const created = await createRollout(server, {
      kind: 'pac_activate',
      board_selector: {},
      params: { pac: SAMPLE_PAC },
      batch_size: 1,
      abort: { failure_percent: 50, min_finished: 2 },
    });
    // Only the first phase has started.
    expect(['queued', 'running']).toContain(created.boards[0]!.status);
    expect(created.boards.slice(1).map((b) => b.status)).toEqual(['pending', 'pending', 'pending']);

    const done = await waitForRollout(server, created.id, (r) => r.finished_at !== null, 90_000);
    expect(done.status).toBe('aborted');
    expect(done.boards.map((b) => b.status)).toEqual(['succeeded', 'failed', 'skipped', 'skipped']);
    expect(done.boards.slice(2).every((b) => b.operation_id === null)).toBe(true);
    expect(done.counts).toMatchObject({ succeeded: 1, failed: 1, skipped: 2 });
    const failed = await json(await server.api(`/api/operations/${done.boards[1]!.operation_id}/`));
    expect(failed.error).toMatchObject({ code: 'pac_not_active' });

    const after = await Promise.all(boards.map((b) => getBoard(server, b.id)));
    expect(after[0]!.active_pac).toBe(SAMPLE_PAC);
    expect(after[2]!.active_pac).toBeNull();
    expect(after[3]!.active_pac).toBeNull();
    // Nothing was ever asked of the skipped boards.
    const ops = await json(await server.api(`/api/operations/?kind=pac_activate&board_id=${boards[2]!.id}`));
    expect(ops.total).toBe(0);
  });

  it('pause holds the next phase; resume lets it go on', async () => {
    const invocationId = await newInvocation(server, 'phased', 0.3);
    const created = await createRollout(server, { kind: 'execute', board_selector: {}, invocation_id: invocationId, batch_size: 2 });
    const paused = await post(server, `/api/rollouts/${created.id}/pause/`);
    expect(paused.status).toBe(202);
    expect(await json(paused)).toMatchObject({ status: 'paused' });
    expect((await post(server, `/api/rollouts/${created.id}/pause/`)).status).toBe(409);

    // The first phase ends; the next does not start, even after a few sweeps.
    await waitForRollout(server, created.id, (r) => r.boards[0]!.status === 'succeeded' && r.boards[1]!.status === 'succeeded');
    await new Promise((r) => setTimeout(r, 5_000));
    const held = await getRollout(server, created.id);
    expect(held.status).toBe('paused');
    expect(held.boards.map((b) => b.status)).toEqual(['succeeded', 'succeeded', 'pending', 'pending']);

    const resumed = await post(server, `/api/rollouts/${created.id}/resume/`);
    expect(resumed.status).toBe(202);
    const done = await waitForRollout(server, created.id, (r) => r.finished_at !== null);
    expect(done.status).toBe('succeeded');
    expect(done.counts.succeeded).toBe(4);
  });

  it('cancel cancels queued steps and skips the boards not started; running ones finish', async () => {
    // b1 is busy with a long run, so its step waits queued behind it.
    const longRun = await newInvocation(server, 'long', 4);
    const busy = await post(server, `/api/invocations/${longRun}/execute/`, { board_id: boards[0]!.id }, { prefer: 'respond-async' });
    expect(busy.status).toBe(202);
    const invocationId = await newInvocation(server, 'cancelled', 2);
    const created = await createRollout(server, { kind: 'execute', board_selector: {}, invocation_id: invocationId, batch_size: 2 });
    await waitForRollout(server, created.id, (r) => r.boards[0]!.status === 'queued' && r.boards[1]!.status === 'running');

    const res = await post(server, `/api/rollouts/${created.id}/cancel/`);
    expect(res.status).toBe(202);
    const cancelled = (await json(res)) as { status: string; boards: Array<{ status: string; operation_id: number }> };
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.boards.map((b) => b.status)).toEqual(['cancelled', 'running', 'skipped', 'skipped']);
    expect(await json(await server.api(`/api/operations/${cancelled.boards[0]!.operation_id}/`))).toMatchObject({ status: 'cancelled' });
    expect((await post(server, `/api/rollouts/${created.id}/resume/`)).status).toBe(409);

    const done = await waitForRollout(server, created.id, (r) => r.finished_at !== null);
    expect(done.status).toBe('cancelled');
    expect(done.boards.map((b) => b.status)).toEqual(['cancelled', 'succeeded', 'skipped', 'skipped']);
    // A finished rollout's stream says so at once.
    const events = await followRollout(server, created.id);
    expect(events.map((e) => e.event)).toEqual(['status', 'end']);
  });
  it('a pac_install rollout sends the one stored archive to every board over its link', async () => {
    const missing = await post(server, '/api/rollouts/', { kind: 'pac_install', board_selector: {}, params: { archive_sha256: 'a'.repeat(64) } });
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ code: 'content_not_found' });

    // Uploaded once (resumably, by sha256), kept by the server as any file it holds.
    const archive = gzip(await tarArchive(realPacEntries('fleet_pac', 'zcu104-fleet-cfg1')));
    const holder = await json(await post(server, '/api/invocations/create/', { name: 'pac archive', description: '' }));
    expect((await upload(server.url, holder.id, 'bitstream', 'fleet_pac.tar.gz', archive)).status).toBe(201);
    const sha256 = createHash('sha256').update(archive).digest('hex');

    const created = await createRollout(server, { kind: 'pac_install', board_selector: {}, params: { archive_sha256: sha256, filename: 'fleet_pac.tar.gz' }, batch_size: 2 });
    const done = await waitForRollout(server, created.id, (r) => r.finished_at !== null, 90_000);
    expect(done.status).toBe('succeeded');
    for (const b of boards) {
      const q = await json(await post(server, '/api/pacs/query/', { board_id: b.id }));
      expect(q.pacs.map((p: { name: string }) => p.name)).toContain('zcu104-fleet-cfg1');
    }
    // Still stored for the next rollout.
    expect((await server.api(`/api/invocations/${holder.id}/files/bitstream/`)).status).toBe(200);
  });

  it('mm run --all runs on every board, prints the table and saves each output; mm rollouts ls/show', async () => {
    const home = await cliHome();
    try {
      const work = path.join(home.dir, 'work');
      await fs.writeFile(path.join(work, 'p.json'), JSON.stringify({ duration_s: 0.2 }));
      const env = { MM_SERVER_URL: server.url };
      const r = await home.run(['run', '--all', '--name', 'fleet', '--parameter', 'p.json'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/BOARD\s+STATUS\s+TIME/);
      for (const b of ['b1', 'b2', 'b3', 'b4']) expect(r.stdout).toMatch(new RegExp(`^${b}\\s+succeeded\\s+\\d+\\.\\d\\d s`, 'm'));
      const saved = (await fs.readdir(work)).filter((f) => f.endsWith('.mp4')).sort();
      expect(saved).toHaveLength(4);
      expect(saved[0]).toMatch(/^fleet-\d+-b1\.mp4$/);

      const ls = await home.run(['rollouts', 'ls', '--kind', 'execute'], env);
      expect(ls.code, ls.stderr).toBe(0);
      // The first row under the header (issue 39: mm rollouts ls has one).
      const newest = Number(/^(\d+)/m.exec(ls.stdout)![1]);
      const show = await home.run(['--json', 'rollouts', 'show', String(newest)], env);
      expect(JSON.parse(show.stdout)).toMatchObject({ id: newest, status: 'succeeded', counts: { succeeded: 4 } });
      const bad = await home.run(['rollouts', 'create', 'pac_activate', '--label', 'camera=yes', '--pac', SAMPLE_PAC], env);
      expect(bad.code).toBe(3); // no board: exit 3, as the contract says
      expect(bad.stderr).toMatch(/No registered board matches/);
    } finally {
      await home.cleanup();
    }
  });
});
