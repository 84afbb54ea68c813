import os from 'node:os';
import readline from 'node:readline';
import type { Command } from 'commander';
import { Api } from '../api.ts';
import { say } from '../context.ts';
import { CliError, EXIT, UsageError } from '../errors.ts';
import { configFile, DEFAULT_SERVER, type GlobalOptions, normaliseServer, readConfig, withLogin, writeConfig } from '../settings.ts';

interface LoginOptions {
  username?: string;
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description(`check and save the server and credentials (in ${configFile().replace(os.homedir(), '~')}, mode 0600)`)
    .option('--username <name>', 'log in with a password (asked for, or MM_PASSWORD) and save a new personal token')
    .addHelpText('after', '\nWith --token T (or MM_API_TOKEN) the token is checked and saved; with --username U a\npersonal token is created for this machine and saved.')
    .action(async (opts: LoginOptions, command: Command) => {
      const globals = command.optsWithGlobals() as GlobalOptions;
      const saved = await readConfig();
      const server = normaliseServer(globals.server ?? (process.env.MM_SERVER_URL || undefined) ?? saved.server ?? DEFAULT_SERVER);
      if (opts.username && globals.token) throw new UsageError('Give either --token or --username, not both.');
      let token: string | undefined;
      let user: unknown;
      if (opts.username) {
        ({ token, user } = await loginWithPassword(server, opts.username));
      } else {
        token = globals.token ?? (process.env.MM_API_TOKEN || undefined);
        if (!token) throw new UsageError('Give --token T or --username U.', 'A personal token comes from the dashboard or `POST /api/tokens/`; MM_API_TOKEN works too.');
        user = await checkToken(server, token);
      }
      await writeConfig(withLogin(saved, server, token));
      const json = { server, user: user ?? null, config_file: configFile() };
      if (globals.json) say(JSON.stringify(json, null, 2));
      else say(`Logged in to ${server}${user && typeof user === 'object' && 'username' in user ? ` as ${String(user.username)}` : ''}; saved in ${configFile()}.`);
    });
}

/** Checks the token: `GET /api/auth/me/` where accounts exist, else any authenticated read. */
async function checkToken(server: string, token: string): Promise<unknown> {
  const api = new Api(server, token);
  const me = await api.client.GET('/api/auth/me/');
  if (me.data) return me.data.user;
  if (me.response.status !== 404) throw api.problem(me.response, me.error);
  await api.call(api.client.GET('/api/invocations/', { params: { query: { limit: 1 } } }));
  return undefined;
}

/** POST /api/auth/login/ for a session, then POST /api/tokens/ on it for a personal token. */
async function loginWithPassword(server: string, username: string): Promise<{ token: string; user: unknown }> {
  const password = process.env.MM_PASSWORD ?? (await askPassword(`Password for ${username}: `));
  const api = new Api(server, undefined);
  // Same origin as the dashboard: a cookie-authenticated change must come from it.
  const origin = new URL(server).origin;
  const login = await api.client.POST('/api/auth/login/', { body: { username, password }, headers: { origin } });
  if (login.response.status === 404) throw new CliError(EXIT.failed, 'This server has no user accounts (no /api/auth/login/).', 'Log in with --token instead.');
  const { user } = await api.call(Promise.resolve(login));
  const session = login.response.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('mm_session='));
  if (!session) throw new CliError(EXIT.auth, 'The server accepted the password but set no session cookie.');
  const created = await api.call(api.client.POST('/api/tokens/', { body: { name: `mm on ${os.hostname()}` }, headers: { origin, cookie: session } }));
  if (!created.token) throw new CliError(EXIT.failed, 'The server created a token but did not return it.');
  return { token: created.token, user };
}

/** Reads a password from the terminal without echoing it (or a line from a pipe). */
function askPassword(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const input = process.stdin;
    if (!input.isTTY) {
      const rl = readline.createInterface({ input });
      rl.once('line', (line) => {
        rl.close();
        resolve(line);
      });
      rl.once('close', () => reject(new UsageError('No password given (stdin ended).', 'Set MM_PASSWORD or run it on a terminal.')));
      return;
    }
    process.stderr.write(prompt);
    input.setRawMode(true);
    input.resume();
    let value = '';
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          input.setRawMode(false);
          input.pause();
          input.off('data', onData);
          process.stderr.write('\n');
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          input.setRawMode(false);
          process.stderr.write('\n');
          process.exit(EXIT.interrupted);
        }
        if (ch === '\u007f') value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.on('data', onData);
  });
}
