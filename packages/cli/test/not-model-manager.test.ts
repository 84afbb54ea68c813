/**
 * Issue 32, item 4: a URL that answers but is not a Model Manager control plane is named as
 * such (exit 3), not a JSON parse error or a bare "HTTP 404".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { standInServer, type StandIn } from '../../../test/support/stand-in-server.ts';

describe('mm against something that is not a Model Manager', () => {
  let cli: CliHome;
  let web: StandIn;
  let url: string;
  beforeAll(async () => {
    cli = await cliHome();
    // A web site: a page for every path (200 for / and one API path, 404 elsewhere).
    web = await standInServer((req, res) => {
      res.writeHead(req.url === '/' || req.url?.startsWith('/api/invocations/') ? 200 : 404, { 'content-type': 'text/html' }).end('<html><body>Welcome</body></html>');
    });
    url = web.url;
  });
  afterAll(async () => {
    await cli?.cleanup();
    await web?.close();
  });

  it('a web page where the API should answer: says the URL is not a Model Manager server, exit 3', async () => {
    for (const args of [['invocations', 'ls'], ['boards', 'ls'], ['login', '--token', 'x']]) {
      const r = await cli.run([...args, '--server', url]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(new RegExp(`^mm: ${url.replace(/\./g, '\\.')} does not look like a Model Manager server: GET /api/[a-z/]+ answered HTTP (200|404) \\(text/html\\)`, 'm'));
      expect(r.stderr).not.toMatch(/Unexpected token|SyntaxError|\n\s+at /);
    }
    const asJson = await cli.run(['boards', 'ls', '--server', url, '--json']);
    expect(JSON.parse(asJson.stdout).error.exit_code).toBe(3);
  }, 120_000);
});
