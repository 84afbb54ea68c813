/**
 * Issue 27, hole 5: a saved token goes only to the server it was saved for. Two recording
 * HTTP servers stand in for two control planes; the client runs as its bundle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { standInServer } from '../../../test/support/stand-in-server.ts';

interface Recorder {
  url: string;
  /** The Authorization header of every request, in order (undefined: none sent). */
  auth: Array<string | undefined>;
  close(): Promise<void>;
}

async function recordingServer(): Promise<Recorder> {
  const auth: Array<string | undefined> = [];
  const server = await standInServer((req, res) => {
    auth.push(req.headers.authorization);
    const body = req.url?.startsWith('/api/auth/me/') ? { user: { id: 1, username: 'someone', role: 'operator' } } : { invocations: [], total: 0 };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return { ...server, auth };
}

describe('mm keeps credentials per server', () => {
  let cli: CliHome;
  let a: Recorder;
  let b: Recorder;
  beforeAll(async () => {
    [cli, a, b] = await Promise.all([cliHome(), recordingServer(), recordingServer()]);
  });
  afterAll(async () => {
    await Promise.all([cli?.cleanup(), a?.close(), b?.close()]);
  });

  it("after `mm login --server A`, `--server B` sends none of A's credentials; each server gets its own token", async () => {
    expect((await cli.run(['login', '--server', a.url, '--token', 'token-of-a'])).code).toBe(0);

    const toB = await cli.run(['invocations', 'ls', '--server', b.url]);
    expect(toB.code, toB.stderr).toBe(0);
    expect(b.auth).toEqual([undefined]);

    // The saved server stays the default and keeps its token (a trailing slash is the same server).
    expect((await cli.run(['invocations', 'ls'])).code).toBe(0);
    expect((await cli.run(['invocations', 'ls', '--server', `${a.url}/`])).code).toBe(0);
    expect(a.auth.slice(-2)).toEqual(['Bearer token-of-a', 'Bearer token-of-a']);

    // A login to B adds B's token without forgetting A's.
    expect((await cli.run(['login', '--server', b.url, '--token', 'token-of-b'])).code).toBe(0);
    expect((await cli.run(['invocations', 'ls'])).code).toBe(0);
    expect(b.auth.at(-1)).toBe('Bearer token-of-b');
    expect((await cli.run(['invocations', 'ls', '--server', a.url])).code).toBe(0);
    expect(a.auth.at(-1)).toBe('Bearer token-of-a');

    // MM_SERVER_URL names a server as --server does.
    const c = await recordingServer();
    try {
      expect((await cli.run(['invocations', 'ls'], { MM_SERVER_URL: c.url })).code).toBe(0);
      expect(c.auth).toEqual([undefined]);
    } finally {
      await c.close();
    }
  }, 120_000);
});
