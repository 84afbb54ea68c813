/**
 * The server's own OpenAPI document, taken in process from the app's route registry: the
 * route factories only register routes (handlers use the context later), so a context with
 * a config, version and logger is enough and no database is opened.
 */
import { createApp } from '../../server/src/app.ts';
import { AuthService } from '../../server/src/auth/auth-service.ts';
import type { Database } from '../../server/src/db/database.ts';
import type { Services } from '../../server/src/services.ts';
import { loadConfig } from '../../server/src/config.ts';
import { createLogger } from '../../server/src/logger.ts';

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({ MM_DATA_DIR: '/nonexistent', LOG_LEVEL: 'silent', DATABASE_URL: '' });
  // Services some factories wire up at registration (e.g. the relay subscribes to the agent
  // hub): stand-ins that accept any call and do nothing.
  const inert: object = new Proxy(function () {}, { get: (_t, key) => (key === 'then' ? undefined : inert), apply: () => inert });
  const log = createLogger('silent');
  const auth = new AuthService(config, inert as Database, log);
  // Any other service a factory touches at registration is inert too.
  const known: Record<string, unknown> = { config, version: '0.0.0', log, auth };
  const ctx = new Proxy(known, { get: (t, key) => (typeof key === 'string' && key in t ? t[key] : inert) }) as unknown as Services;
  const app = createApp(ctx);
  const res = await app.request('http://127.0.0.1:8000/api/openapi.json', { headers: { host: '127.0.0.1:8000' } });
  if (!res.ok) throw new Error(`GET /api/openapi.json answered ${res.status}`);
  const doc = (await res.json()) as Record<string, unknown>;
  // The version changes every release; the client's types do not depend on it.
  (doc.info as Record<string, unknown>).version = '0.0.0';
  return doc;
}
