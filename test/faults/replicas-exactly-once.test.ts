/**
 * Exactly once across replicas (issue 46; docs/replicas.md, docs/reliability.md): three
 * control planes on one PostgreSQL and one shared data folder behind a round-robin balancer,
 * eight simulated boards, 200 selector executes and a rollout, and a replica killed with
 * SIGKILL every 20–30 s (then started again) until the work is done. Afterwards:
 *
 * - every operation ended (none lost, none left queued or running), and succeeded;
 * - none ran twice on a board, counted on the boards' side: the runner
 *   (counting-runner.sh) appends a line to its board's file for every run it starts;
 * - no board stays busy; the rollout reached a terminal state;
 * - the replicas that were not being killed answered every request meanwhile.
 *
 * All of it runs one invocation, and the runner's output depends only on the invocation and the
 * op id's parity, so runs on boards linked to different replicas end together with identical
 * bytes: the content race the issue found (one replica's collection deleting content another
 * had pinned).
 *
 * It prints its figures (one JSON line): operations per minute, the longest wait of runnable
 * work while a matching board was idle (sampled every second), and per kill the time until
 * the boards linked to the killed replica were linked again and were running work again.
 * Bounded to a few minutes; EXACTLY_ONCE_SEED, EXACTLY_ONCE_EXECUTES, EXACTLY_ONCE_RUN_S,
 * EXACTLY_ONCE_INVOCATIONS, EXACTLY_ONCE_KILL_MIN_S / _MAX_S change the run (EXACTLY_ONCE_FIGURES
 * appends the figures to a file, EXACTLY_ONCE_DUMP writes the samples into a folder).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { upload } from './fault-support.ts';
import { startBalancer, type Balancer } from '../support/balancer.ts';
import { createScratchDatabase, realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, repoRoot, serverCluster, startAgent, type AgentProcess, type LogLine, type ServerCluster, type ServerProcess } from '../support/processes.ts';

if (!realDatabaseUrl) console.log('replicas-exactly-once: skipped: several replicas need a real PostgreSQL (set DATABASE_URL)');

vi.setConfig({ testTimeout: 900_000, hookTimeout: 600_000 });

const BOARDS = 8;
const EXECUTES = Number(process.env.EXACTLY_ONCE_EXECUTES ?? 200);
const RUN_S = Number(process.env.EXACTLY_ONCE_RUN_S ?? 3);
const INVOCATIONS = Number(process.env.EXACTLY_ONCE_INVOCATIONS ?? 1);
/** Kills every run has at least (the killer goes on after the work if it ended sooner). */
const MIN_KILLS = 3;
const KILL_MIN_MS = Number(process.env.EXACTLY_ONCE_KILL_MIN_S ?? 20) * 1000;
const KILL_MAX_MS = Number(process.env.EXACTLY_ONCE_KILL_MAX_S ?? 30) * 1000;
const SEED = Number(process.env.EXACTLY_ONCE_SEED ?? Date.now() % 100_000);
/** The whole run must end within this (it takes 2–4 minutes on the shared 2-core machine). */
const DEADLINE_MS = 12 * 60_000;
const RUNNER = path.join(repoRoot, 'test/faults/counting-runner.sh');
const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

interface Op {
  id: number;
  status: string;
  board_id: string | null;
  error: { code: string; message: string } | null;
  created_at: string;
  finished_at: string | null;
}
interface Board {
  id: string;
  name: string;
  status: string;
  busy: boolean;
  queued: number;
  current_operation_id: number | null;
}

/** mulberry32: the kill schedule and victims from one seed (printed), so a failing run can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const msOf = (l: LogLine) => Date.parse(String(l.time));

describe.skipIf(!realDatabaseUrl)('exactly once across three replicas, one killed with SIGKILL every 20–30 s', () => {
  const clusters: ServerCluster[] = [];
  const names = ['once-a', 'once-b', 'once-c'];
  /** Replicas being killed or started again (not asked anything meanwhile). */
  const down = [false, false, false];
  const agents: AgentProcess[] = [];
  const boards: Array<{ id: string; token: string; name: string; runLog: string }> = [];
  const invocations: number[] = [];
  let scratch: { url: string; drop(): Promise<void> };
  let sharedDir: string;
  let balancer: Balancer;
  /** Every server process started (killed ones included), for their logs. */
  const processes: ServerProcess[] = [];

  /** A replica that is up (and not about to be killed), for the test's own questions. */
  const live = () => {
    const i = down.findIndex((d, j) => !d && clusters[j] !== undefined);
    if (i < 0) throw new Error('no replica is up');
    return clusters[i]!.current();
  };
  const call = (base: { api(p: string, init?: RequestInit): Promise<Response> }, method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    base.api(p, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
  const viaBalancer = { api: (p: string, init?: RequestInit) => fetch(new URL(p, balancer.url), init) };

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-exactly-once-'));
    await fs.mkdir(path.join(sharedDir, 'runs'));
    const cluster = async (name: string) => {
      const c = await serverCluster('embedded', { DATABASE_URL: scratch.url, MM_DATA_DIR: sharedDir, MM_REPLICA_ID: name });
      clusters.push(c);
      return c;
    };
    // The first one migrates the database; the others start together.
    processes.push(await (await cluster(names[0]!)).start());
    const [b, c] = await Promise.all([cluster(names[1]!), cluster(names[2]!)]);
    processes.push(...(await Promise.all([b.start(), c.start()])));
    balancer = await startBalancer(clusters.map((c) => ({ host: '127.0.0.1', port: c.current().port })));
    const A = clusters[0]!.current();
    for (let i = 0; i < BOARDS; i++) {
      const created = await json(await call(A, 'POST', '/api/boards/', { name: `once-${i}` }));
      expect((await call(A, 'PATCH', `/api/boards/${created.id}/`, { labels: { pool: 'exactly-once' } })).status).toBe(200);
      const runLog = path.join(sharedDir, 'runs', `once-${i}.log`);
      boards.push({ id: created.id, token: created.token, name: created.name, runLog });
      agents.push(
        await startAgent({
          serverUrl: balancer.url,
          token: created.token,
          agentDir: path.join(sharedDir, `agent-${i}`),
          env: { MM_RUNNER: `/bin/sh ${RUNNER}`, MM_E2E_RUN_LOG: runLog, MM_E2E_RUN_SECONDS: String(RUN_S) },
        }),
      );
    }
    await eventually(async () => {
      const { boards: seen } = (await json(await A.api('/api/boards/?status=online'))) as { boards: Board[] };
      expect(seen).toHaveLength(BOARDS);
    }, 120_000, 250);
    // One invocation (EXACTLY_ONCE_INVOCATIONS for more): its runs on eight boards end together
    // on three replicas, their outputs alternating between two contents (the op id's parity),
    // so each attach lets go of content other replicas may have just written and pinned.
    for (let i = 0; i < INVOCATIONS; i++) {
      const res = await call(A, 'POST', '/api/invocations/create/', { name: `once-${i}`, description: 'exactly once' });
      const id = (await json(res)).id as number;
      expect((await upload(A.url, id, 'parameter', 'p.json', Buffer.from(JSON.stringify({ n: i })))).status).toBe(201);
      invocations.push(id);
    }
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await balancer?.close();
    for (const c of clusters) await c.cleanup();
    await scratch?.drop();
    if (sharedDir) await fs.rm(sharedDir, { recursive: true, force: true });
  });

  it('every operation ends once, on one board; no board stays busy; the rollout ends; the other replicas keep answering', async () => {
    const rand = random(SEED);
    const started = Date.now();

    // ── the work: 200 selector executes and a rollout, all asked before the first kill ──
    const opIds: number[] = [];
    for (let i = 0; i < EXECUTES; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, EXECUTES - i) }, async (_, k) => {
          const inv = invocations[(i + k) % invocations.length]!;
          const res = await call(viaBalancer, 'POST', `/api/invocations/${inv}/execute/`, { board_selector: { pool: 'exactly-once' } }, { prefer: 'respond-async' });
          expect(res.status).toBe(202);
          return ((await json(res)) as Op).id;
        }),
      );
      opIds.push(...batch);
    }
    const submittedAt = Date.now();
    const rolloutRes = await call(viaBalancer, 'POST', '/api/rollouts/', { kind: 'execute', board_selector: { pool: 'exactly-once' }, invocation_id: invocations[0], batch_size: 2 });
    expect(rolloutRes.status).toBe(201);
    const rolloutId = ((await json(rolloutRes)) as { id: number }).id;

    // ── the killer: every 20–30 s (kill to kill) the replica holding the most board links is
    //    killed with SIGKILL and started again 2 s later; never two down at once ──
    const kills: Array<{ replica: string; at: number; upAt?: number }> = [];
    const restarts: Array<Promise<void>> = [];
    let stopKilling = false;
    let wake: (() => void) | undefined;
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    /** Links each replica holds now, from its processes' logs (agent online minus agent disconnected). */
    const links = (i: number) => {
      const current = clusters[i]!.current();
      const online = current.output.lines.filter((l) => l.msg === 'agent online').length;
      return online - current.output.lines.filter((l) => l.msg === 'agent disconnected').length;
    };
    const killer = (async () => {
      let due = Date.now() + KILL_MIN_MS + rand() * (KILL_MAX_MS - KILL_MIN_MS);
      while (!stopKilling) {
        await pause(Math.max(0, due - Date.now()));
        if (stopKilling) break;
        if (down.some(Boolean)) {
          // The last victim is still starting: kill once it is back.
          await Promise.all(restarts);
          continue;
        }
        const most = Math.max(...clusters.map((_, i) => links(i)));
        const candidates = clusters.map((_, i) => i).filter((i) => links(i) === most);
        const i = candidates[Math.floor(rand() * candidates.length)]!;
        down[i] = true;
        const kill = { replica: names[i]!, at: Date.now() } as (typeof kills)[number];
        kills.push(kill);
        await clusters[i]!.current().kill();
        restarts.push(
          (async () => {
            await sleep(2000);
            processes.push(await clusters[i]!.start());
            kill.upAt = Date.now();
            down[i] = false;
          })(),
        );
        due = kill.at + KILL_MIN_MS + rand() * (KILL_MAX_MS - KILL_MIN_MS);
      }
      await Promise.all(restarts);
    })();

    // ── watching: a sample of boards and queue every second; every up replica probed every second ──
    /** Every second: which boards the API showed online and idle, and whether runnable work waited for them. */
    const samples: Array<{ at: number; selectorQueued: number; idle: Array<{ name: string; queued: number }> }> = [];
    const survivorFailures: string[] = [];
    let probes = 0;
    let watching = true;
    const sampler = (async () => {
      while (watching) {
        try {
          const r = live();
          const [b, q] = await Promise.all([call(r, 'GET', '/api/boards/'), call(r, 'GET', '/api/operations/?status=queued&limit=1')]);
          const seen = ((await json(b)) as { boards: Board[] }).boards;
          const queuedTotal = ((await json(q)) as { total: number }).total;
          const selectorQueued = queuedTotal - seen.reduce((n, x) => n + x.queued, 0);
          const idle = seen.filter((x) => x.status === 'online' && !x.busy).map((x) => ({ name: x.name, queued: x.queued }));
          samples.push({ at: Date.now(), selectorQueued, idle });
        } catch {
          // asked a replica just as it was killed: no sample
        }
        await sleep(1000);
      }
    })();
    const prober = (async () => {
      while (watching) {
        await Promise.all(
          clusters.map(async (c, i) => {
            if (down[i]) return;
            const server = c.current();
            const killsBefore = kills.length;
            try {
              const res = await server.api('/api/health/', { signal: AbortSignal.timeout(15_000) });
              probes++;
              if (res.status !== 200 && !down[i] && kills.length === killsBefore) survivorFailures.push(`${names[i]}: ${res.status}`);
              await res.arrayBuffer();
            } catch (err) {
              // A replica killed while it was being asked did not fail as a survivor.
              if (!down[i] && kills.length === killsBefore) survivorFailures.push(`${names[i]}: ${String(err)}`);
            }
          }),
        );
        await sleep(1000);
      }
    })();

    // ── until every operation and the rollout have ended ──
    let ops: Op[] = [];
    let rollout: { status: string; finished_at: string | null; boards: Array<{ operation_id: number | null; status: string }> } | undefined;
    try {
      for (;;) {
        if (Date.now() - started > DEADLINE_MS) throw new Error(`not done within ${DEADLINE_MS / 60_000} minutes`);
        try {
          const r = live();
          ops = ((await json(await call(r, 'GET', '/api/operations/?kind=execute&limit=1000'))) as { operations: Op[] }).operations;
          rollout = await json(await call(r, 'GET', `/api/rollouts/${rolloutId}/`));
          // At least MIN_KILLS kills, whatever the machine's speed (on a fast one the work may end first).
          if (ops.length >= EXECUTES && ops.every((o) => FINAL.has(o.status)) && rollout?.finished_at && kills.length >= MIN_KILLS) break;
        } catch {
          // a replica killed under the question: ask again
        }
        await sleep(2000);
      }
    } finally {
      stopKilling = true;
      wake?.();
      await killer;
      watching = false;
      await Promise.all([sampler, prober]);
    }
    const finishedAt = Date.now();

    // ── every operation ended, once, on one board ──
    const byId = new Map(ops.map((o) => [o.id, o]));
    const lost = opIds.filter((id) => !byId.has(id));
    expect(lost, 'operations lost').toEqual([]);
    const notSucceeded = ops.filter((o) => o.status !== 'succeeded').map((o) => ({ id: o.id, status: o.status, error: o.error }));
    expect(notSucceeded, 'operations that did not succeed').toEqual([]);
    const stillOpen = await Promise.all(['queued', 'running'].map(async (s) => ((await json(await call(live(), 'GET', `/api/operations/?status=${s}&limit=1`))) as { total: number }).total));
    expect(stillOpen, 'operations queued, running').toEqual([0, 0]);

    const runs = new Map<number, Array<{ board: string; at: number }>>();
    const ends = new Set<number>();
    for (const b of boards) {
      const text = await fs.readFile(b.runLog, 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        const [what, op, at] = line.split(' ');
        if (what === 'start') runs.set(Number(op), [...(runs.get(Number(op)) ?? []), { board: b.id, at: Number(at) }]);
        if (what === 'end') ends.add(Number(op));
      }
    }
    const twice = [...runs].filter(([, r]) => r.length > 1).map(([op, r]) => ({ op, boards: r.map((x) => x.board) }));
    expect(twice, 'operations run more than once').toEqual([]);
    for (const o of ops) {
      expect(runs.get(o.id)?.map((r) => r.board), `op ${o.id} ran on its board, once`).toEqual([o.board_id]);
      expect(ends.has(o.id), `op ${o.id}'s run ended`).toBe(true);
    }

    // ── no board stays busy; the rollout ended; every replica answers again ──
    for (const c of clusters) {
      await eventually(async () => {
        const seen = ((await json(await call(c.current(), 'GET', '/api/boards/'))) as { boards: Board[] }).boards;
        const byName = (x: unknown[], y: unknown[]) => String(x[0]).localeCompare(String(y[0]));
        expect(seen.map((b) => [b.name, b.status, b.busy, b.current_operation_id, b.queued]).sort(byName)).toEqual(
          boards.map((b) => [b.name, 'online', false, null, 0]).sort(byName),
        );
      }, 60_000, 500);
    }
    expect(rollout?.status).toBe('succeeded');
    expect(rollout?.boards.every((b) => b.status === 'succeeded')).toBe(true);
    expect(survivorFailures, 'requests the replicas not being killed failed to answer').toEqual([]);

    // ── figures ──
    const agentLines = agents.map((a) => a.output.lines);
    // A board counts as idle when the API showed it online and not busy AND its agent was linked
    // then (its own log): a board whose replica was just killed still shows online, from a
    // session row that has not gone stale yet, while its agent is reconnecting.
    const linkedAt = (i: number, t: number) => {
      let linked = false;
      for (const l of agentLines[i]!) {
        if (msOf(l) > t) break;
        if (l.msg === 'link up') linked = true;
        else if (l.msg === 'link closed') linked = false;
      }
      return linked;
    };
    // Per board: how long it stayed idle (and linked) while work it could run waited, from the
    // first sample that saw it so to the first that did not (an upper bound: samples come every
    // 1–3 s on a loaded machine). A board passing between two runs is idle for a moment too.
    let longestIdleMs = 0;
    let longestAt: number | undefined;
    for (const [i, board] of boards.entries()) {
      let since: number | undefined;
      for (const s of samples) {
        const idle = s.idle.find((b) => b.name === board.name);
        const waiting = idle !== undefined && linkedAt(i, s.at) && (idle.queued > 0 || s.selectorQueued > 0);
        if (waiting) since ??= s.at;
        else if (since !== undefined) {
          if (s.at - since > longestIdleMs) [longestIdleMs, longestAt] = [s.at - since, since];
          since = undefined;
        }
      }
    }
    const gaps = samples.slice(1).map((s, i) => s.at - samples[i]!.at).sort((a, b) => a - b);
    const recovery = kills.map((k) => {
      const next = kills.find((x) => x.at > k.at)?.at ?? finishedAt;
      // Boards whose link closed with the kill: when they were linked again, and ran work again.
      const affected = agentLines
        .map((lines, i) => ({ i, closed: lines.find((l) => l.msg === 'link closed' && msOf(l) >= k.at && msOf(l) < k.at + 10_000) }))
        .filter((a) => a.closed !== undefined);
      const relinked = affected.map((a) => agentLines[a.i]!.find((l) => l.msg === 'link up' && msOf(l) > msOf(a.closed!)));
      const working = affected.map((a) => {
        const starts = [...runs.values()].flat().filter((r) => r.board === boards[a.i]!.id && r.at > k.at && r.at < next);
        return starts.length ? Math.min(...starts.map((r) => r.at)) : undefined;
      });
      return {
        replica: k.replica,
        at_s: Math.round((k.at - started) / 100) / 10,
        boards_affected: affected.length,
        relinked_s: relinked.every(Boolean) && relinked.length ? Math.max(...relinked.map((l) => msOf(l!) - k.at)) / 1000 : null,
        running_again_s: working.every((w) => w !== undefined) && working.length ? Math.max(...working.map((w) => w! - k.at)) / 1000 : null,
        replica_back_s: k.upAt ? (k.upAt - k.at) / 1000 : null,
      };
    });
    // Every operation listed (the rollout's steps are executes too) succeeded.
    const succeeded = ops.length;
    const firstRun = Math.min(...[...runs.values()].flat().map((r) => r.at));
    const lastEnd = Math.max(...ops.map((o) => Date.parse(o.finished_at ?? '')));
    const figures = {
      seed: SEED,
      executes: EXECUTES,
      rollout_boards: rollout?.boards.length,
      run_s: RUN_S,
      minutes: Math.round((finishedAt - started) / 600) / 100,
      // From the first POST to the last operation's end.
      operations_per_minute: Math.round((succeeded / ((lastEnd - started) / 60_000)) * 10) / 10,
      longest_runnable_wait_with_idle_board_s: longestIdleMs / 1000,
      longest_wait_began_at_s: longestAt !== undefined ? Math.round((longestAt - started) / 100) / 10 : null,
      sample_interval_median_s: (gaps[Math.floor(gaps.length / 2)] ?? 0) / 1000,
      work_minutes: Math.round((lastEnd - firstRun) / 600) / 100,
      operations_per_work_minute: Math.round((succeeded / ((lastEnd - firstRun) / 60_000)) * 10) / 10,
      submitted_s: Math.round((submittedAt - started) / 100) / 10,
      samples: samples.length,
      probes,
      kills: recovery,
      // Across every process of every replica (the killed ones too).
      outcome_retries: processes.reduce((n, p) => n + p.output.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('could not settle an outcome')).length, 0),
      server_errors: processes.reduce((n, p) => n + p.output.lines.filter((l) => Number(l.level) >= 50).length, 0),
    };
    console.log(`replicas-exactly-once figures: ${JSON.stringify(figures)}`);
    if (process.env.EXACTLY_ONCE_FIGURES) await fs.appendFile(process.env.EXACTLY_ONCE_FIGURES, `${JSON.stringify(figures)}\n`);
    if (process.env.EXACTLY_ONCE_DUMP) {
      // For a closer look: the samples, the kills, every board's link changes and runs (times relative to the start).
      const rel = (t: number) => Math.round((t - started) / 100) / 10;
      await fs.writeFile(
        path.join(process.env.EXACTLY_ONCE_DUMP, `exactly-once-${SEED}.json`),
        JSON.stringify({
          kills: kills.map((k) => ({ ...k, at: rel(k.at), upAt: k.upAt ? rel(k.upAt) : null })),
          samples: samples.map((x) => ({ ...x, at: rel(x.at) })),
          links: agentLines.map((lines, i) => ({ board: boards[i]!.name, events: lines.filter((l) => l.msg === 'link up' || l.msg === 'link closed').map((l) => [rel(msOf(l)), l.msg]) })),
          runs: boards.map((b) => ({ board: b.name, starts: [...runs].flatMap(([op, r]) => r.filter((x) => x.board === b.id).map((x) => [op, rel(x.at)])) })),
        }),
      );
    }
    // No replica logged an error: an outcome that could not be settled (an attach whose content
    // another replica's collection had deleted) logged one and left its operation running until
    // the agent happened to reconnect, which the kills here hide. Across every process, the killed ones too.
    const errors = processes.flatMap((p) => p.output.lines.filter((l) => Number(l.level) >= 50)).map((l) => ({ msg: l.msg, err: (l.err as { message?: string } | undefined)?.message }));
    expect(errors, 'errors the replicas logged').toEqual([]);
  });
});
