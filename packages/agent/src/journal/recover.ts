import type { OperationOutcome } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { isGroupAlive, processStartTime, terminateGroup } from '../runner/process-group.ts';
import type { Journal, JournalOperation } from './journal.ts';

/**
 * Settles what a previous agent process left in the journal, before the first hello:
 *
 * - an operation that was running its runner (`run`) cannot be finished by this process:
 *   it becomes `failed` / `agent_restarted`, and its process group, if still alive in this
 *   same boot (and not a reused pid), is ended;
 * - an operation that was only transferring is forgotten: the server sees it neither
 *   running nor finished and sends `op.start` again, which resumes from the partial files.
 *
 * Outcomes already journaled stay until acknowledged (they go into `hello.finished`).
 */
export async function recoverJournal(journal: Journal, opts: { bootId: string; log: Logger; graceMs?: number }): Promise<void> {
  for (const op of journal.operations()) {
    if (op.phase === 'transfer') {
      opts.log.info({ op_id: op.op_id }, 'dropping an interrupted transfer: the server will start it again');
      await journal.drop(op.op_id);
      continue;
    }
    const killed = await endLeftoverRunner(op, opts);
    const outcome: OperationOutcome = {
      op_id: op.op_id,
      status: 'failed',
      finished_at: new Date().toISOString(),
      result: null,
      error: {
        code: 'agent_restarted',
        message: `the agent restarted while the runner was running${killed ? ' (its leftover processes were ended)' : ''}`,
      },
      output: null,
    };
    opts.log.warn({ op_id: op.op_id, killed }, 'operation interrupted by an agent restart: reporting it failed');
    await journal.recordOutcome(outcome);
  }
}

async function endLeftoverRunner(op: JournalOperation, opts: { bootId: string; log: Logger; graceMs?: number }): Promise<boolean> {
  const proc = op.process;
  if (!proc || op.boot_id !== opts.bootId || !isGroupAlive(proc.pgid)) return false;
  const startTime = await processStartTime(proc.pgid);
  // The leader exists but started at another time: its pid was reused, the group is not ours.
  if (startTime !== null && proc.start_time !== null && startTime !== proc.start_time) return false;
  opts.log.warn({ op_id: op.op_id, pgid: proc.pgid }, 'ending the runner left over from before the restart');
  await terminateGroup(proc.pgid, opts.graceMs ?? 5000);
  return true;
}
