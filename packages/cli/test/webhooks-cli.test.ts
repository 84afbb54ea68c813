/**
 * `mm webhooks ls|create|deliveries|redeliver|rm` (docs/webhooks.md) against the real control
 * plane and a real receiver: the secret printed once, the log, a redelivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { WebhookReceiver } from '../../server/test/support/webhook-receiver.ts';

describe('mm webhooks', () => {
  let cli: CliHome;
  let server: TestServer;
  let rx: WebhookReceiver;
  const mm = (...args: string[]) => cli.run(['--server', server.url, ...args]);

  beforeAll(async () => {
    [cli, server, rx] = await Promise.all([cliHome(), startTestServer('embedded', { MM_WEBHOOK_ALLOW_PRIVATE: '1' }), WebhookReceiver.start()]);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await cli?.cleanup();
  });

  it('creates (printing the secret once), lists, shows the log, redelivers and removes', async () => {
    const created = await mm('--json', 'webhooks', 'create', rx.url('/cli'), '--event', 'regression.detected,board.offline', '--slack');
    expect(created.code, created.stderr).toBe(0);
    const sub = JSON.parse(created.stdout) as { id: string; secret: string; format: string; events: string[] };
    expect(sub).toMatchObject({ format: 'slack', events: ['regression.detected', 'board.offline'] });
    expect(sub.secret).toMatch(/^whsec_/);

    const text = await mm('webhooks', 'create', rx.url('/cli-2'), '--event', 'rollout.finished');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Webhook [0-9a-f-]{36} created: rollout\.finished → http:\/\/127\.0\.0\.1:\d+\/cli-2 \(standard\)\.\nSigning secret \(shown this once\): whsec_\S+\n$/);

    const ls = await mm('webhooks', 'ls');
    expect(ls.stdout.split('\n')[0]).toMatch(/^ID\s+URL\s+EVENTS\s+FORMAT\s+ENABLED\s+CREATED$/);
    expect(ls.stdout).toContain('regression.detected,board.offline');
    expect(ls.stdout).not.toContain('whsec_');

    await server.ctx.webhooks.emit('regression.detected', { summary: 'from the cli test' });
    const [first] = await rx.waitFor('/cli', 1);
    new Webhook(sub.secret).verify(first!.body, first!.headers as Record<string, string>);
    const log = await eventually(async () => {
      const r = await mm('--json', 'webhooks', 'deliveries', sub.id);
      const page = JSON.parse(r.stdout) as { deliveries: Array<{ id: number; status: string }> };
      expect(page.deliveries[0]?.status).toBe('delivered');
      return page;
    });
    const table = await mm('webhooks', 'deliveries', sub.id, '--status', 'delivered');
    expect(table.stdout).toMatch(new RegExp(`^${log.deliveries[0]!.id}\\s+regression\\.detected\\s+delivered\\s+1\\s+200`, 'm'));

    const again = await mm('webhooks', 'redeliver', sub.id, String(log.deliveries[0]!.id));
    expect(again.stdout).toBe(`Delivery ${log.deliveries[0]!.id} (regression.detected) will be sent again now.\n`);
    await rx.waitFor('/cli', 2);

    expect((await mm('webhooks', 'create', rx.url(), '--event', 'board.exploded')).code).toBe(2);
    expect((await mm('webhooks', 'create', rx.url())).code).toBe(2);
    const rm = await mm('webhooks', 'rm', sub.id);
    expect(rm.stdout).toBe(`Deleted webhook ${sub.id}.\n`);
    const gone = await mm('webhooks', 'rm', sub.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/No webhook subscription/);
  });
});
