/**
 * A script-stream client that stops reading (issue 46, hole 11): the relay must cut it (so it
 * resumes with Last-Event-ID) and it must learn of the cut, and a client resuming after
 * events the server no longer holds must be told so (`event: gap`), never miss them silently.
 *
 * The stalled client is a raw TCP client with a 4 KiB receive buffer (Python's socket
 * module: Node cannot set SO_RCVBUF), as the probe that found the hole was; another client
 * reads every event meanwhile. The agent is a protocol-speaking fake (support/fake-agent.ts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { openSse, upstreamState, type SseBlock } from '../../../test/e2e/device-scripts-support.ts';
import { FakeAgent } from './support/fake-agent.ts';

const API_TOKEN = 'api-token-for-the-stalled-client-test';
const auth = { authorization: `Bearer ${API_TOKEN}` };

/**
 * The stalled client: connects with a 4 KiB receive buffer, sends the request, reads the
 * head, says `ready` and reads nothing more until a line comes on stdin. Then it reads until
 * the server ends the connection (EOF or reset) or 60 s pass, and prints one JSON line: how it
 * ended, the bytes it read after the stall, the id of the last whole event it got.
 */
const STALLED_CLIENT = String.raw`
import json, socket, sys
host, port, path, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n" % (path, host, port, token)).encode())
buf = b''
while b'\r\n\r\n' not in buf:
    buf += s.recv(4096)
status = buf.split(b'\r\n', 1)[0].decode()
print(json.dumps({"ready": status}), flush=True)
sys.stdin.readline()
last_id = None
after = 0
end = 'timeout'
s.settimeout(60)
def take(data):
    global buf, last_id
    buf += data
    while b'\n\n' in buf:
        block, buf = buf.split(b'\n\n', 1)
        for line in block.split(b'\n'):
            if line.startswith(b'id: '):
                last_id = line[4:].decode()
try:
    while True:
        d = s.recv(65536)
        if not d:
            end = 'eof'
            break
        after += len(d)
        take(d)
except ConnectionResetError:
    end = 'reset'
except socket.timeout:
    end = 'timeout'
print(json.dumps({"end": end, "bytes_after_stall": after, "last_id": last_id}), flush=True)
`;

interface StalledClient {
  proc: ChildProcessWithoutNullStreams;
  /** Lines it printed (JSON), in order. */
  lines: Array<Record<string, unknown>>;
  next(): Promise<Record<string, unknown>>;
}

function startStalledClient(url: string, path: string): StalledClient {
  const u = new URL(url);
  const proc = spawn('python3', ['-c', STALLED_CLIENT, u.hostname, u.port, path, API_TOKEN]);
  const lines: Array<Record<string, unknown>> = [];
  let partial = '';
  let wake: (() => void) | undefined;
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdout.on('data', (d: Buffer) => {
    partial += d.toString();
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n')) {
      lines.push(JSON.parse(partial.slice(0, nl)) as Record<string, unknown>);
      partial = partial.slice(nl + 1);
    }
    wake?.();
  });
  let taken = 0;
  return {
    proc,
    lines,
    async next() {
      while (taken >= lines.length) {
        if (proc.exitCode !== null) throw new Error(`the stalled client exited: ${stderr}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          proc.once('exit', () => resolve());
        });
      }
      return lines[taken++]!;
    },
  };
}

describe('a script-stream client that stops reading', () => {
  let server: TestServer;
  let agent: FakeAgent;
  let scriptId: string;

  beforeAll(async () => {
    server = await startTestServer('embedded', { MM_API_TOKEN: API_TOKEN, LOG_LEVEL: 'silent' });
    const api = (p: string, body: unknown) =>
      server.api(p, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const board = await json(await api('/api/boards/', { name: 'stalled-probe' }));
    const entry = { name: 'events', device_type: 'test', description: '', script_filename: 's.mjs', remote_dir: '/opt/s', port: 4322, version: '1.0.0' };
    scriptId = (await json(await api('/api/device-scripts/', entry))).id;
    agent = await FakeAgent.online(server.url, board.token);
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
  });

  it('is cut (a reset it sees without reading the backlog), and resuming after what is no longer held starts with event: gap', async () => {
    const path = `/api/device-scripts/${scriptId}/stream/`;
    const reader = await openSse(`${server.url}${path}`, auth);
    expect(reader.status).toBe(200);
    const sub = await agent.next('sse.subscribe');
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'open' });
    await reader.waitFor((b) => upstreamState(b) === 'up');

    const stalled = startStalledClient(server.url, path);
    try {
      expect((await stalled.next()).ready).toBe('HTTP/1.1 200 OK');

      // 20,000 events of ~0.9 KB (18 MB): far more than the kernel's buffers (a few MB) and
      // the relay's allowance (1 MiB, cut past 2 MiB). Sent in batches the reader takes before
      // the next, as a reader keeps up (a single burst would put every client behind at once).
      const count = 20_000;
      const batch = 500;
      const data = 'e'.repeat(900);
      for (let first = 1; first <= count; first += batch) {
        const last = Math.min(count, first + batch - 1);
        for (let id = first; id <= last; id++) agent.send({ type: 'sse.event', sub_id: sub.sub_id, id: String(id), data });
        await reader.waitFor((b) => b.id === String(last), { timeoutMs: 60_000 });
      }
      expect(reader.blocks.filter((b) => b.data === data)).toHaveLength(count);

      // Now it reads: the connection ends, and it learns that at once. Before the fix the
      // relay closed it politely, so the end waited behind megabytes of stale events in the
      // server's socket (or never came, once the kernel gave up on the orphaned socket).
      stalled.proc.stdin.write('go\n');
      const ended = await stalled.next();
      expect(['reset', 'eof']).toContain(ended.end);
      expect(ended.bytes_after_stall as number).toBeLessThan(256 * 1024);
      const lastSeen = (ended.last_id as string | null) ?? undefined;
      expect(Number(lastSeen ?? 0)).toBeLessThan(count - 256);

      // Resuming where it stopped: the ring (256 events) no longer holds that id. It must be
      // told (a gap), then get what is still held, in order, up to the newest event.
      const resumed = await openSse(`${server.url}${path}`, { ...auth, ...(lastSeen ? { 'last-event-id': lastSeen } : {}) });
      try {
        await resumed.waitFor((b) => b.id === String(count));
        const events = resumed.blocks.filter((b: SseBlock) => b.retry === undefined && b.comment === undefined && b.event !== 'upstream');
        expect(events[0]?.event).toBe('gap');
        expect(JSON.parse(events[0]!.data!)).toMatchObject({ last_event_id: lastSeen ?? expect.anything() });
        const ids = events.slice(1).map((b) => Number(b.id));
        expect(ids.at(-1)).toBe(count);
        expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => count - ids.length + 1 + i));
      } finally {
        resumed.close();
      }
    } finally {
      stalled.proc.kill();
      reader.close();
    }
  });
});
