import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OperationOutcome } from '@mm/protocol';
import { Journal } from '../src/journal/journal.ts';
import { recoverJournal } from '../src/journal/recover.ts';
import { processStartTime, signalGroup } from '../src/runner/process-group.ts';
import { removeTempDirs, tempDir, testLogger, waitUntil } from './support/agent-fixture.ts';
import { isProcessAlive } from './support/processes.ts';

afterAll(removeTempDirs);

let dir: string;
const leftovers: number[] = [];
const log = testLogger();

beforeEach(async () => {
  dir = await tempDir('mm-journal-');
});
afterEach(() => {
  for (const pgid of leftovers.splice(0)) signalGroup(pgid, 'SIGKILL');
});

const outcome = (opId: number): OperationOutcome => ({
  op_id: opId,
  status: 'succeeded',
  finished_at: '2026-11-21T10:00:00.000Z',
  result: { exit_code: 0 },
  error: null,
  output: { filename: 'o.mp4', sha256: 'a'.repeat(64), size: 10, content_type: 'video/mp4' },
});

/** A detached process group like a runner's: a shell and a child. */
async function startGroup(): Promise<{ pgid: number; child: number }> {
  const pidFile = path.join(dir, `pids-${Date.now()}`);
  const p = spawn('/bin/sh', ['-c', `sleep 300 & echo $! > "${pidFile}"; wait`], { detached: true, stdio: 'ignore' });
  p.unref();
  const pgid = p.pid!;
  leftovers.push(pgid);
  const child = await waitUntil(async () => Number((await fsp.readFile(pidFile, 'utf8').catch(() => '')).trim()) || undefined, 'the group to start');
  return { pgid, child };
}

describe('Journal', () => {
  it('keeps started operations and outcomes across a reopen, written atomically', async () => {
    const j = await Journal.open(dir, log);
    await j.recordStart({ op_id: 1, kind: 'execute', invocation_id: 9, started_at: new Date().toISOString(), boot_id: 'b1' });
    await j.setPhase(1, 'run', { pgid: 1234, start_time: '99' });
    await j.recordStart({ op_id: 2, kind: 'transfer', invocation_id: 9, started_at: new Date().toISOString(), boot_id: 'b1' });
    await j.recordOutcome(outcome(2));
    const again = await Journal.open(dir, log);
    expect(again.operations()).toEqual([expect.objectContaining({ op_id: 1, phase: 'run', process: { pgid: 1234, start_time: '99' } })]);
    expect(again.outcomes()).toEqual([outcome(2)]);
    await again.acknowledge(2);
    expect((await Journal.open(dir, log)).outcomes()).toEqual([]);
    // Nothing but the journal itself in the folder: no temporary files left behind.
    expect(await fsp.readdir(dir)).toEqual(['journal.json']);
  });

  it('applies concurrent changes one after the other', async () => {
    const j = await Journal.open(dir, log);
    await Promise.all(Array.from({ length: 20 }, (_, i) => j.recordOutcome(outcome(i + 1))));
    expect((await Journal.open(dir, log)).outcomes().map((o) => o.op_id).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('moves an unreadable journal aside and starts empty', async () => {
    await fsp.writeFile(path.join(dir, 'journal.json'), '{"version":1,"operations":[');
    const j = await Journal.open(dir, log);
    expect(j.outcomes()).toEqual([]);
    expect((await fsp.readdir(dir)).some((n) => n.startsWith('journal.json.corrupt-'))).toBe(true);
  });
});

describe('recoverJournal', () => {
  it('reports a run interrupted by an agent restart as failed agent_restarted and ends its leftover processes', async () => {
    const { pgid, child } = await startGroup();
    const j = await Journal.open(dir, log);
    await j.recordStart({ op_id: 5, kind: 'execute', invocation_id: 1, started_at: new Date().toISOString(), boot_id: 'boot-A' });
    await j.setPhase(5, 'run', { pgid, start_time: await processStartTime(pgid) });
    await j.recordStart({ op_id: 6, kind: 'transfer', invocation_id: 1, started_at: new Date().toISOString(), boot_id: 'boot-A' });
    await j.recordOutcome({ ...outcome(4) });

    const reopened = await Journal.open(dir, log);
    await recoverJournal(reopened, { bootId: 'boot-A', log, graceMs: 500 });
    // The transfer is forgotten (the server starts it again); the run became an outcome.
    expect(reopened.operations()).toEqual([]);
    const byId = new Map(reopened.outcomes().map((o) => [o.op_id, o]));
    expect(byId.get(4)).toEqual(outcome(4));
    expect(byId.get(5)).toMatchObject({ status: 'failed', error: { code: 'agent_restarted' }, output: null });
    expect(byId.has(6)).toBe(false);
    await waitUntil(() => !isProcessAlive(pgid) && !isProcessAlive(child), 'the leftover runner processes to be gone', 10_000);
    // And it is on disk.
    expect((await Journal.open(dir, log)).outcome(5)?.error?.code).toBe('agent_restarted');
  });

  it('leaves alone a process group recorded in another boot (its pid means nothing now)', async () => {
    const { pgid } = await startGroup();
    const j = await Journal.open(dir, log);
    await j.recordStart({ op_id: 8, kind: 'execute', invocation_id: 1, started_at: new Date().toISOString(), boot_id: 'boot-OLD' });
    await j.setPhase(8, 'run', { pgid, start_time: await processStartTime(pgid) });
    await recoverJournal(j, { bootId: 'boot-NEW', log, graceMs: 200 });
    expect(j.outcome(8)?.error?.code).toBe('agent_restarted');
    expect(isProcessAlive(pgid)).toBe(true);
  });

  it('leaves alone a process whose pid was reused (other start time)', async () => {
    const { pgid } = await startGroup();
    const j = await Journal.open(dir, log);
    await j.recordStart({ op_id: 9, kind: 'execute', invocation_id: 1, started_at: new Date().toISOString(), boot_id: 'boot-A' });
    await j.setPhase(9, 'run', { pgid, start_time: '1' });
    await recoverJournal(j, { bootId: 'boot-A', log, graceMs: 200 });
    expect(j.outcome(9)?.status).toBe('failed');
    expect(isProcessAlive(pgid)).toBe(true);
  });
});
