import path from 'node:path';
import { formatMetric, metricLabel, readEventStream } from '@mm/api-client';
import type { Api, Schemas } from './api.ts';
import type { CommandContext } from './context.ts';
import { downloadFile } from './download.ts';
import { ApiProblemError, InterruptedError, UnreachableError } from './errors.ts';
import { duration, table, when } from './format.ts';

export type Rollout = Schemas['Rollout'];
export type RolloutBoard = Rollout['boards'][number];

const isEnded = (s: string) => ['succeeded', 'failed', 'cancelled', 'skipped'].includes(s);

/**
 * Follows a rollout's event stream until `end` and resolves with the final rollout; each
 * board whose step ends is noted on stderr. A dropped stream is opened again (it starts from
 * the whole rollout). Ctrl-C rejects with InterruptedError; the rollout goes on.
 */
export async function followRollout(ctx: CommandContext, id: number): Promise<Rollout> {
  const { api, signal, progress } = ctx;
  const told = new Set<string>();
  const tell = (b: RolloutBoard) => {
    const key = `${b.board_id ?? b.board_name}`;
    if (!isEnded(b.status) || told.has(key)) return;
    told.add(key);
    progress.note(`${b.board_name}: ${b.status}${b.run_ms !== null ? ` in ${duration(b.run_ms)}` : ''}${b.error ? `: ${b.error.message}` : ''}`);
  };
  let failures = 0;
  for (;;) {
    if (signal.aborted) throw new InterruptedError();
    try {
      const res = await api.answer(api.client.GET('/api/rollouts/{id}/events/', { params: { path: { id } }, parseAs: 'stream', signal }));
      failures = 0;
      for await (const e of readEventStream(res.body!)) {
        if (e.event === 'status' || e.event === 'end') {
          const r = JSON.parse(e.data) as Rollout;
          r.boards.forEach(tell);
          if (e.event === 'end') return r;
        } else if (e.event === 'board') tell(JSON.parse(e.data) as RolloutBoard);
      }
    } catch (err) {
      if (signal.aborted) throw new InterruptedError();
      if (err instanceof ApiProblemError) throw err;
      if (++failures > 10) throw err instanceof UnreachableError ? err : new UnreachableError(api.server, `lost the rollout's event stream: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/**
 * Board, status, time and each metric (with its unit), one row per board; a failed or
 * cancelled step gives its reason, and its time is said to be the time until it failed.
 */
export function rolloutTable(r: Rollout): string {
  const names = [...new Set(r.boards.flatMap((b) => Object.keys(b.metrics ?? {})).filter((k) => k !== 'run_ms'))].sort();
  const reasons = r.boards.some((b) => b.error);
  // One unit down the column (seconds), so the boards' times compare at a glance.
  const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const time = (b: RolloutBoard) => (b.run_ms === null ? null : b.status === 'failed' ? `failed after ${secs(b.run_ms)}` : secs(b.run_ms));
  return table(
    ['BOARD', 'STATUS', 'TIME', ...names.map((n) => metricLabel(n).toUpperCase()), ...(reasons ? ['REASON'] : [])],
    r.boards.map((b) => [
      b.board_name,
      b.board_offline_since ? `${b.status}, board offline since ${when(b.board_offline_since)}` : b.status,
      time(b),
      ...names.map((n) => (b.metrics?.[n] === undefined ? null : formatMetric(n, b.metrics[n]))),
      ...(reasons ? [b.error ? `${b.error.message} (${b.error.code})` : null] : []),
    ]),
  );
}

export function rolloutSummary(r: Rollout): string {
  const c = r.counts;
  const parts = Object.entries(c).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  const leftOut = (r.left_out ?? []).map((b) => `${b.board_name} (${b.reason === 'bad' ? 'health bad' : 'in maintenance'})`);
  return `Rollout ${r.id} (${r.kind}) ${r.status}: ${parts.join(', ') || 'no boards'}.${leftOut.length ? `\nLeft out: ${leftOut.join(', ')}.` : ''}`;
}

/** Saves each succeeded board's output as `<name>-<id>-<board>.mp4`; answers where each went. */
export async function saveOutputs(ctx: CommandContext, api: Api, r: Rollout, name: string, invocationId: number, dir = '.'): Promise<Array<{ board: string; path: string }>> {
  const saved: Array<{ board: string; path: string }> = [];
  const slug = (s: string) => s.replace(/[^\w.-]+/g, '-');
  for (const b of r.boards) {
    if (b.status !== 'succeeded' || !b.board_id || b.operation_id === null) continue;
    const op = await api.call(api.client.GET('/api/operations/{id}/', { params: { path: { id: b.operation_id } } }));
    const video = (op.result as { output_video?: { size: number; sha256: string } | null } | null)?.output_video;
    if (!video) continue;
    const out = path.join(dir, `${slug(name)}-${invocationId}-${slug(b.board_name)}.mp4`);
    const bar = ctx.progress.bar(`output of ${b.board_name}`, video.size);
    const boardId = b.board_id;
    await downloadFile({
      api,
      request: (headers) =>
        api.client.GET('/api/rollouts/{id}/boards/{board_id}/output/', { params: { path: { id: r.id, board_id: boardId } }, parseAs: 'stream', headers, signal: ctx.signal }),
      out,
      size: video.size,
      sha256: video.sha256,
      bar,
      signal: ctx.signal,
      note: (l) => ctx.progress.note(l),
    });
    bar.done();
    saved.push({ board: b.board_name, path: path.resolve(out) });
  }
  return saved;
}
