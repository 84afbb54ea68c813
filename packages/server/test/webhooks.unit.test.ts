/**
 * Webhooks, the pure parts (docs/webhooks.md): Standard Webhooks signatures checked by the
 * `standardwebhooks` package, the address policy (IPv4, IPv6, IPv4 inside IPv6), the
 * resolver seam and the guarded lookup, backoff and the delivery state machine on a
 * ManualClock, the payloads (Slack's blocks), and the sealed secrets.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '@mm/protocol';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { checkWebhookUrl, guardedLookup, ipv6Bytes, refusedAddress, resolveAllowed, WebhookUrlRefused, type Resolver } from '../src/webhooks/address-policy.ts';
import { nextState, outcomeOfStatus, parseRetryAfter, retryDelayMs, type AttemptOutcome } from '../src/webhooks/backoff.ts';
import { webhookIdOf } from '../src/webhooks/delivery-worker.ts';
import { slackBody, slackEscape, standardBody } from '../src/webhooks/payloads.ts';
import { KEY_FILE, SecretBox, SecretKeyMismatch } from '../src/webhooks/secret-box.ts';
import { newWebhookSecret, signWebhook, verifyWebhookSignature, webhookHeaders } from '../src/webhooks/signature.ts';

describe('signatures (Standard Webhooks)', () => {
  it('signs so that the standardwebhooks package verifies, and a changed body, id or secret does not', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const body = JSON.stringify({ type: 'board.offline', timestamp: '2026-11-21T10:00:00.000Z', data: { board: { id: 'b1', name: 'zcu-1' } } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders(secret, webhookIdOf('0b6f3c1e-8d4a-4f51-9a43-2f0f2b1f7c11'), ts, body);
    expect(headers['webhook-id']).toBe('msg_0b6f3c1e8d4a4f519a432f0f2b1f7c11');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    const wh = new Webhook(secret);
    expect(wh.verify(body, headers)).toEqual(JSON.parse(body));
    // The package's own signature of the same message is ours.
    expect(wh.sign(headers['webhook-id'], new Date(ts * 1000), body)).toBe(headers['webhook-signature']);
    expect(() => wh.verify(body.replace('zcu-1', 'zcu-2'), headers)).toThrow(WebhookVerificationError);
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'msg_other' })).toThrow(WebhookVerificationError);
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(verifyWebhookSignature(secret, headers['webhook-id'], ts, body, `v1,bogus ${headers['webhook-signature']}`)).toBe(true);
    expect(verifyWebhookSignature(secret, headers['webhook-id'], ts + 1, body, headers['webhook-signature'])).toBe(false);
  });

  it('is HMAC-SHA256 of id.timestamp.body with the base64-decoded secret (the specification’s example)', () => {
    // From the Standard Webhooks specification's examples.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    expect(signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('the address policy', () => {
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.20', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback (IPv4-mapped)'],
    ['::ffff:7f00:1', 'loopback (IPv4-mapped)'],
    ['::ffff:10.0.0.1', 'private (IPv4-mapped)'],
    ['::ffff:169.254.169.254', 'link-local (IPv4-mapped)'],
    ['::127.0.0.1', 'reserved (IPv4-compatible)'],
    ['64:ff9b::a00:1', 'private (NAT64)'],
    ['2002:7f00:1::1', 'loopback (6to4)'],
    ['2001:db8::1', 'documentation'],
    ['localhost', 'not an IP address'],
  ];
  it.each(refused)('refuses %s (%s)', (address, why) => {
    expect(refusedAddress(address)).toBe(why);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:93.184.216.34', '64:ff9b::808:808', '2002:5db8:d822::1'])('allows %s', (address) => {
    expect(refusedAddress(address)).toBeUndefined();
  });

  it('reads IPv6 in every spelling', () => {
    expect(ipv6Bytes('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(ipv6Bytes('1:2:3:4:5:6:7:8')).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(ipv6Bytes('::ffff:1.2.3.4')).toEqual([...Array(10).fill(0), 255, 255, 1, 2, 3, 4]);
    expect(ipv6Bytes('1::')).toEqual([0, 1, ...Array(14).fill(0)]);
    expect(ipv6Bytes('1:2::')?.length).toBe(16);
    expect(ipv6Bytes('not-ip')).toBeUndefined();
    expect(ipv6Bytes('1.2.3.4')).toBeUndefined();
  });

  const resolver = (answers: Record<string, string[]>): Resolver => async (host) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('checks a URL at create time: literal and resolved addresses, one refused answer refuses the name, unresolvable names pass', async () => {
    const resolve = resolver({ 'public.test': ['93.184.216.34'], 'inside.test': ['10.0.0.7'], 'both.test': ['93.184.216.34', '127.0.0.1'], 'v6.test': ['::ffff:192.168.0.1'] });
    const policy = { allowPrivate: false, resolve };
    await expect(checkWebhookUrl('https://public.test/hook', policy)).resolves.toBeUndefined();
    await expect(checkWebhookUrl('http://127.0.0.1:9000/', policy)).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
    await expect(checkWebhookUrl('http://[::1]/', policy)).rejects.toThrow(WebhookUrlRefused);
    await expect(checkWebhookUrl('http://[::ffff:127.0.0.1]/', policy)).rejects.toThrow(/loopback \(IPv4-mapped\)/);
    // WHATWG URLs read these as 127.0.0.1.
    await expect(checkWebhookUrl('http://2130706433/', policy)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl('http://0x7f.1/', policy)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl('http://inside.test/', policy)).rejects.toThrow(/inside\.test resolves to 10\.0\.0\.7, a private address/);
    await expect(checkWebhookUrl('http://both.test/', policy)).rejects.toThrow(/127\.0\.0\.1/);
    await expect(checkWebhookUrl('http://v6.test/', policy)).rejects.toThrow(/private \(IPv4-mapped\)/);
    await expect(checkWebhookUrl('ftp://public.test/', policy)).rejects.toThrow(/http and https only/);
    await expect(checkWebhookUrl('http://nowhere.test/', policy)).resolves.toBeUndefined();
    // MM_WEBHOOK_ALLOW_PRIVATE=1: everything goes (but the scheme).
    await expect(checkWebhookUrl('http://127.0.0.1:9000/', { allowPrivate: true, resolve })).resolves.toBeUndefined();
    await expect(resolveAllowed('inside.test', { allowPrivate: true, resolve })).resolves.toEqual([{ address: '10.0.0.7', family: 4 }]);
  });

  it('hands Node only checked addresses from the lookup, in both callback forms, and refuses a changed answer', async () => {
    let answer = ['93.184.216.34', '2606:4700:4700::1111'];
    const lookup = guardedLookup({ allowPrivate: false, resolve: async () => answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) });
    const call = (options: { all?: boolean; family?: number }) =>
      new Promise<{ err: unknown; address: unknown; family: unknown }>((resolve) => lookup('rebind.test', options, (err, address, family) => resolve({ err, address, family })));
    expect(await call({ all: true })).toEqual({ err: null, address: [{ address: '93.184.216.34', family: 4 }, { address: '2606:4700:4700::1111', family: 6 }], family: undefined });
    expect(await call({})).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(await call({ family: 6 })).toEqual({ err: null, address: '2606:4700:4700::1111', family: 6 });
    answer = ['127.0.0.1'];
    const refusedCall = await call({ all: true });
    expect(refusedCall.err).toBeInstanceOf(WebhookUrlRefused);
    expect(String(refusedCall.err)).toMatch(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
  });
});

describe('backoff and the delivery state machine', () => {
  const policy = { baseMs: 30_000, maxMs: 7_200_000 };

  it('waits a uniform share of base·2^(n−1), capped (full jitter)', () => {
    expect(retryDelayMs(1, policy, () => 0)).toBe(0);
    expect(retryDelayMs(1, policy, () => 0.999999)).toBe(29_999);
    expect(retryDelayMs(3, policy, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(20, policy, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(10_000, policy, () => 0.999999)).toBeLessThan(7_200_000);
  });

  it('reads Retry-After in seconds and as a date', () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:05:00 GMT', now)).toBe(300_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('classifies answers: 2xx delivered, 410 gone, redirects and the rest failures', () => {
    expect(outcomeOfStatus(204)).toEqual({ kind: 'delivered', statusCode: 204 });
    expect(outcomeOfStatus(410)).toEqual({ kind: 'gone', statusCode: 410 });
    expect(outcomeOfStatus(302, undefined, 'Location: http://127.0.0.1/')).toEqual({ kind: 'failed', statusCode: 302, error: 'a redirect (not followed): Location: http://127.0.0.1/' });
    expect(outcomeOfStatus(503, 5000, 'busy')).toEqual({ kind: 'failed', statusCode: 503, error: 'HTTP 503: busy', retryAfterMs: 5000 });
  });

  it('moves pending → delivered / failed (410 turns the subscription off) / pending later, honouring Retry-After and the give-up time', () => {
    const now = Date.UTC(2026, 0, 1);
    const giveUpAt = now + 86_400_000;
    const fail: AttemptOutcome = { kind: 'failed', statusCode: 500, error: 'HTTP 500' };
    expect(nextState({ kind: 'delivered', statusCode: 200 }, { attempts: 1, giveUpAt }, now, policy)).toEqual({ status: 'delivered' });
    expect(nextState({ kind: 'gone', statusCode: 410 }, { attempts: 1, giveUpAt }, now, policy)).toMatchObject({ status: 'failed', disableSubscription: true });
    expect(nextState(fail, { attempts: 1, giveUpAt }, now, policy, () => 0.5)).toEqual({ status: 'pending', nextAttemptAt: now + 15_000 });
    // Retry-After longer than the backoff wins.
    expect(nextState({ ...fail, retryAfterMs: 600_000 }, { attempts: 1, giveUpAt }, now, policy, () => 0.5)).toEqual({ status: 'pending', nextAttemptAt: now + 600_000 });
    // …shorter: the backoff.
    expect(nextState({ ...fail, retryAfterMs: 1_000 }, { attempts: 1, giveUpAt }, now, policy, () => 0.5)).toEqual({ status: 'pending', nextAttemptAt: now + 15_000 });
    // Past the give-up time: one last attempt at it; a Retry-After past it fails now; at it, failed.
    expect(nextState(fail, { attempts: 30, giveUpAt }, giveUpAt - 1000, policy, () => 0.9)).toEqual({ status: 'pending', nextAttemptAt: giveUpAt });
    expect(nextState({ ...fail, retryAfterMs: 7_200_000 }, { attempts: 3, giveUpAt }, giveUpAt - 1000, policy)).toMatchObject({ status: 'failed', disableSubscription: false });
    expect(nextState(fail, { attempts: 31, giveUpAt }, giveUpAt, policy)).toMatchObject({ status: 'failed', disableSubscription: false });
  });

  it('a receiver that always fails is tried for 24 h on the clock, with growing, capped, jittered waits, then failed', () => {
    const clock = new ManualClock();
    const start = clock.now();
    const giveUpAt = start + 86_400_000;
    let seed = 7;
    // A small deterministic random source (LCG): the schedule is reproducible.
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const attempts: number[] = [];
    let state: ReturnType<typeof nextState> = { status: 'pending', nextAttemptAt: start };
    while (state.status === 'pending') {
      clock.advance(state.nextAttemptAt - clock.now());
      attempts.push(clock.now());
      state = nextState({ kind: 'failed', statusCode: 500, error: 'HTTP 500' }, { attempts: attempts.length, giveUpAt }, clock.now(), policy, random);
    }
    expect(state).toMatchObject({ status: 'failed', why: 'retried until the give-up time' });
    expect(attempts.at(-1)).toBe(giveUpAt);
    const waits = attempts.slice(1).map((t, i) => t - attempts[i]!);
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThanOrEqual(Math.min(policy.maxMs, policy.baseMs * 2 ** i));
    });
    // About 24 h / (cap / 2) plus the ramp: tens of attempts, not thousands.
    expect(attempts.length).toBeGreaterThan(15);
    expect(attempts.length).toBeLessThan(80);
  });
});

describe('payloads', () => {
  const event = {
    id: 'e1',
    type: 'operation.finished',
    timestamp: '2026-11-21T10:00:00.000Z',
    data: { operation: { id: 42, kind: 'execute', status: 'failed', error: { code: 'runner_failed', message: 'exit 3 <stderr> & more' } }, board: { id: 'b-1', name: 'zcu<1>' } },
  };

  it('standard: { type, timestamp, data }', () => {
    expect(JSON.parse(standardBody(event))).toEqual({ type: event.type, timestamp: event.timestamp, data: event.data });
  });

  it('slack: text, a mrkdwn section (escaped) and a context line linking back to the dashboard', () => {
    const body = JSON.parse(slackBody(event, 'https://mm.example.org/'));
    expect(body.text).toBe('Operation #42 (execute) failed on zcu<1>');
    expect(body.blocks).toHaveLength(2);
    expect(body.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: expect.stringContaining('*failed* on *zcu&lt;1&gt;*') } });
    expect(body.blocks[0].text.text).toContain('exit 3 &lt;stderr&gt; &amp; more');
    expect(body.blocks[1].type).toBe('context');
    expect(body.blocks[1].elements[0]).toEqual({ type: 'mrkdwn', text: expect.stringMatching(/^<https:\/\/mm\.example\.org\/operations\/42\|Open in Model Manager> · operation\.finished · /) });
    for (const [type, data, link] of [
      ['rollout.finished', { rollout: { id: 7, kind: 'execute', counts: { succeeded: 3, failed: 1 } }, status: 'aborted' }, '/rollouts/7'],
      ['board.offline', { board: { id: 'b-2', name: 'kria-2' }, offline_since: '2026-11-21T09:58:00.000Z' }, '/boards/b-2'],
      ['board.health_changed', { board: { id: 'b-3', name: 'kria-3' }, health: 'bad', previous_health: 'good', reason: 'fps 3 < min 10' }, '/boards/b-3'],
      ['board.enrolled', { board: { id: 'b-4', name: 'kria-4', labels: { site: 'lab' } } }, '/boards/b-4'],
      ['regression.detected', { rollout_id: 9, baseline: 'v1', summary: 'fps −12 % on 2 boards' }, '/rollouts/9'],
      ['board.recovered', { board: { id: 'b-5', name: 'kria-5' }, outcome: 'power-cycled, checks passed' }, '/boards/b-5'],
    ] as const) {
      const m = JSON.parse(slackBody({ ...event, type, data: data as Record<string, unknown> }, 'https://mm.example.org'));
      expect(m.blocks[0].text.type).toBe('mrkdwn');
      expect(m.blocks[0].text.text.length).toBeGreaterThan(10);
      expect(m.blocks[1].elements[0].text).toContain(`<https://mm.example.org${link}|Open in Model Manager>`);
      expect(typeof m.text).toBe('string');
    }
    expect(slackEscape('a<b>&c')).toBe('a&lt;b&gt;&amp;c');
  });
});

describe('sealed secrets', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  it('seals and unseals with the key file (made once, 0600, shared by two boxes on one folder) or the setting; another key is named', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-webhook-key-'));
    dirs.push(dir);
    const [a, b] = await Promise.all([SecretBox.open({ secretKey: undefined, dataDir: dir }), SecretBox.open({ secretKey: undefined, dataDir: dir })]);
    expect(a.keyId).toBe(b.keyId);
    expect((await fs.stat(path.join(dir, KEY_FILE))).mode & 0o777).toBe(0o600);
    expect((await fs.readdir(dir)).sort()).toEqual([KEY_FILE]);
    const secret = newWebhookSecret();
    const sealed = a.seal(secret);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(b.unseal(sealed)).toBe(secret);
    expect(a.seal(secret)).not.toBe(sealed);
    const fromSetting = await SecretBox.open({ secretKey: 'x'.repeat(40), dataDir: dir });
    expect(() => fromSetting.unseal(sealed)).toThrow(SecretKeyMismatch);
    expect((await SecretBox.open({ secretKey: 'x'.repeat(40), dataDir: '/nonexistent' })).unseal(fromSetting.seal('s'))).toBe('s');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => a.unseal(tampered)).toThrow();
  });
});
