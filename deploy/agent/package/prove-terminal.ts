/**
 * The terminal step of the arm64 proof (prove-arm64.sh calls it; docs/terminal.md, docs/packages.md):
 * a terminal session through the control plane to the packaged agent running in the emulated
 * arm64 root, the way a person opens one (the WebSocket of `GET /api/boards/<id>/terminal/`, as
 * the admin). In it: `uname -m` must say aarch64 (the shell is the root's, not this machine's),
 * `id -un` the terminal user, `echo hello-$((6*7))` hello-42; a resize must reach the shell
 * (`stty size`); `exit 7` must come back as the exit frame's status; then the session's row and
 * its recording (asciicast) must hold all of it.
 *
 *   npx tsx deploy/agent/package/prove-terminal.ts --url URL --token TOKEN --board ID --user NAME
 *     [--machine aarch64]   (what `uname -m` must say: another value tries the step on a local board)
 *
 * Prints one line per step with the time since the session opened; exits non-zero on the first
 * step that fails. Timeouts are generous: everything on the board side runs emulated.
 */
import { performance } from 'node:perf_hooks';
import { openTerminal } from '../../../test/support/terminal-client.ts';

function arg(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : undefined;
  if (!v) throw new Error(`--${name} is required`);
  return v;
}

const url = arg('url');
const token = arg('token');
const board = arg('board');
const user = arg('user');
const machine = process.argv.includes('--machine') ? arg('machine') : 'aarch64';
const auth = { authorization: `Bearer ${token}` };
const STEP_MS = 180_000;

let t0 = performance.now();
const say = (text: string) => process.stdout.write(`prove-terminal: [${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${text}\n`);

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(new URL(path, url), { headers: auth });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface SessionRow {
  id: string;
  board_id: string;
  exit_code: number | null;
  end_reason: string | null;
  cols: number;
  rows: number;
  recording_bytes: number | null;
  ended_at: string | null;
}

async function main(): Promise<void> {
  t0 = performance.now();
  const term = await openTerminal(url, board, auth, { cols: 80, rows: 24 });
  say('terminal open (80×24)');

  // A command's answer is the first whole line after the line it was typed on, read without
  // the shell's escapes (colours, title, bracketed-paste mode) and CRs. Each command is typed
  // at a prompt: keys typed ahead (the shell is slow, emulated) are echoed twice, once by the
  // tty and again by readline when it reads them.
  const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g, '').replace(/\r/g, '');
  const more = () => term.waitFor(/[\s\S]/, { from: term.output().length, timeoutMs: STEP_MS });
  const prompt = async (): Promise<void> => {
    while (!/[$#] $/.test(plain(term.output()))) await more();
  };
  const run = async (line: string): Promise<string> => {
    await prompt();
    const from = term.output().length;
    term.type(`${line}\r`);
    for (;;) {
      const lines = plain(term.output().slice(from)).split('\n');
      if (lines.length >= 3) return lines[1]!;
      await more();
    }
  };

  // The login shell starts emulated (and reads its profile): wait for its first prompt.
  await prompt();
  say('the shell is at its prompt');

  const arch = await run('uname -m');
  check(arch === machine, `uname -m said ${JSON.stringify(arch)}, not ${machine}`);
  say(`uname -m: ${arch}`);

  const who = await run('id -un');
  check(who === user, `id -un said ${JSON.stringify(who)}, not ${user}`);
  say(`id -un: ${who}`);

  const tty = await run('tty');
  check(/^\/dev\/pts\/\d+$/.test(tty), `tty said ${JSON.stringify(tty)}`);
  say(`tty: ${tty}`);

  const hello = await run('echo hello-$((6*7))');
  check(hello === 'hello-42', `echo hello-$((6*7)) said ${JSON.stringify(hello)}`);
  say(`echo hello-$((6*7)): ${hello}`);

  term.resize(100, 30);
  // The resize travels client → server → link → agent → helper (TIOCSWINSZ, on its own pipe);
  // `stty size` asks the kernel what the shell's terminal is now. The keys go on the same
  // socket and link but reach the helper on another pipe, so it is asked again (up to 5 times)
  // should they have overtaken the size there.
  let size = '';
  let asked = 0;
  while (size !== '30 100' && asked < 5) {
    size = await run('stty size');
    asked += 1;
  }
  check(size === '30 100', `stty size said ${JSON.stringify(size)} after a resize to 100×30`);
  say(`resized to 100×30; stty size: ${size} (asked ${asked} time${asked === 1 ? '' : 's'})`);

  await prompt();
  term.type('exit 7\r');
  const exit = await Promise.race([term.exit, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no exit frame in time')), STEP_MS))]);
  check(exit?.code === 7 && exit.reason === 'exited', `the exit frame was ${JSON.stringify(exit)}`);
  say(`exit 7: exit frame ${JSON.stringify({ code: exit!.code, reason: exit!.reason })}`);

  // The recording is written when the session ends: ask until it is there.
  let session: SessionRow | undefined;
  let cast = '';
  for (let i = 0; i < 120; i++) {
    const { sessions } = await getJson<{ sessions: SessionRow[] }>(`/api/terminal-sessions/?board_id=${board}&limit=1`);
    session = sessions[0];
    if (session?.ended_at) {
      const res = await fetch(new URL(`/api/terminal-sessions/${session.id}/recording/`, url), { headers: auth });
      if (res.ok) {
        cast = await res.text();
        break;
      }
      if (res.status !== 404) throw new Error(`the recording: ${res.status} ${await res.text()}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  check(session !== undefined, 'no terminal session row for the board');
  check(session!.exit_code === 7 && session!.end_reason === 'exited', `the session row: ${JSON.stringify(session)}`);
  check(cast.length > 0, 'the recording was not served');
  const [headerLine, ...events] = cast.trimEnd().split('\n');
  const header = JSON.parse(headerLine!) as { version: number; width: number; height: number };
  check(header.version === 2 && header.width === 80 && header.height === 24, `the recording's header: ${headerLine}`);
  const parsed = events.map((l) => JSON.parse(l) as [number, string, string]);
  const printed = parsed.filter((e) => e[1] === 'o').map((e) => e[2]).join('');
  check(printed.includes(machine) && printed.includes('hello-42'), `the recording lacks the output (${machine}, hello-42)`);
  check(parsed.some((e) => e[1] === 'r' && e[2] === '100x30'), 'the recording lacks the resize to 100x30');
  say(`recording: ${cast.length} bytes, asciicast v${header.version} ${header.width}×${header.height}, ${parsed.length} events (output holds ${machine} and hello-42, a resize 100x30); session row: exit ${session!.exit_code}, ${session!.end_reason}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`prove-terminal: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
