import type { Labels } from '@mm/api-client';
import { type CommandContext, say } from '../context.ts';
import { CliError, EXIT, InterruptedError } from '../errors.ts';
import { type GateOptions, finishGate, gateReport } from '../gate/gate.ts';
import { followRollout, rolloutSummary, rolloutTable, saveOutputs } from '../rollout-follow.ts';

/**
 * `mm run … --all [--label k=v]…`: the uploaded invocation runs on every matching board at
 * once as an `execute` rollout, followed to its end; then a table of board, status, time and
 * metrics, and each board's output saved as `<name>-<id>-<board>.mp4`. With `gate` (the CI
 * gate's flags, `--baseline` among them) the rollout is compared with the baseline.
 */
export async function runOnAll(
  ctx: CommandContext,
  run: {
    id: number;
    name: string;
    labels: Labels;
    detach: boolean;
    files: unknown;
    repeat?: { repeat?: number; warmup?: number };
    gate?: GateOptions;
    clearPending: () => Promise<void>;
  },
): Promise<void> {
  const { api, signal } = ctx;
  const body = { kind: 'execute' as const, board_selector: run.labels, invocation_id: run.id, ...run.repeat };
  const created = await api.call(api.client.POST('/api/rollouts/', { body, signal }));
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
  const doc = { invocation_id: run.id, rollout: final, outputs: saved };
  const human = () => {
    say(rolloutSummary(final));
    say(rolloutTable(final));
    for (const s of saved) say(`Saved ${s.path}`);
  };
  const failure =
    final.status !== 'succeeded'
      ? new CliError(EXIT.failed, `Not every board succeeded (rollout ${created.id}: ${final.status}).`, `See it: mm rollouts show ${created.id}`, { rollout_id: created.id })
      : undefined;
  if (run.gate?.baseline !== undefined) {
    const runs = final.boards.map((b) => ({ board_id: b.board_id, board_name: b.board_name, operation_id: b.operation_id, status: b.status, run_ms: b.run_ms }));
    const report = await gateReport(ctx, { ...run.gate, baseline: run.gate.baseline }, { title: `${run.name} (invocation ${run.id}, rollout ${created.id})`, runs, target: { rollout_id: created.id } });
    await finishGate(ctx, report, run.gate, doc, human, failure);
    return;
  }
  // One document with --json: the result, or the error carrying it.
  if (failure) {
    if (!ctx.settings.json) human();
    throw new CliError(failure.exitCode, failure.message, failure.hint, { ...failure.details, ...doc });
  }
  ctx.result(doc, human);
}
