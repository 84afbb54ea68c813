import type { Labels } from '@mm/api-client';
import { type CommandContext, say } from '../context.ts';
import { CliError, EXIT, InterruptedError } from '../errors.ts';
import { followRollout, rolloutSummary, rolloutTable, saveOutputs } from '../rollout-follow.ts';

/**
 * `mm run … --all [--label k=v]…`: the uploaded invocation runs on every matching board at
 * once as an `execute` rollout, followed to its end; then a table of board, status, time and
 * metrics, and each board's output saved as `<name>-<id>-<board>.mp4`.
 */
export async function runOnAll(
  ctx: CommandContext,
  run: { id: number; name: string; labels: Labels; detach: boolean; files: unknown; clearPending: () => Promise<void> },
): Promise<void> {
  const { api, signal } = ctx;
  const created = await api.call(api.client.POST('/api/rollouts/', { body: { kind: 'execute', board_selector: run.labels, invocation_id: run.id }, signal }));
  await run.clearPending();
  if (run.detach) {
    ctx.result({ invocation_id: run.id, rollout: created, files: run.files }, () => {
      say(`Invocation ${run.id}: rollout ${created.id} started on ${created.boards.length} board(s).`);
      say(`Follow it with: mm rollouts show ${created.id}`);
    });
    return;
  }
  ctx.progress.note(`running invocation ${run.id} on ${created.boards.length} board(s) as rollout ${created.id}`);
  let final;
  try {
    final = await followRollout(ctx, created.id);
  } catch (err) {
    if (err instanceof InterruptedError) {
      throw new InterruptedError(`Detached from rollout ${created.id}; it keeps running.`, `See it: mm rollouts show ${created.id}`, { rollout_id: created.id });
    }
    throw err;
  }
  const saved = await saveOutputs(ctx, api, final, run.name, run.id);
  ctx.result({ invocation_id: run.id, rollout: final, outputs: saved }, () => {
    say(rolloutSummary(final));
    say(rolloutTable(final));
    for (const s of saved) say(`Saved ${s.path}`);
  });
  if (final.status !== 'succeeded') {
    throw new CliError(EXIT.failed, `Not every board succeeded (rollout ${created.id}: ${final.status}).`, `See it: mm rollouts show ${created.id}`, { rollout_id: created.id });
  }
}
