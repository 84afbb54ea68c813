import type { Command } from 'commander';
import { say } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table, when } from '../format.ts';
import { positiveId, withContext } from './shared.ts';

/** The events a subscription may name (docs/webhooks.md). */
const EVENTS = ['operation.finished', 'rollout.finished', 'board.health_changed', 'board.offline', 'board.enrolled', 'regression.detected', 'board.recovered'] as const;
type EventName = (typeof EVENTS)[number];

function collectEvent(value: string, events: EventName[]): EventName[] {
  const names = value.split(',').map((v) => v.trim()).filter(Boolean);
  for (const n of names) if (!(EVENTS as readonly string[]).includes(n)) throw new UsageError(`--event takes one of ${EVENTS.join(', ')} (got ${JSON.stringify(n)}).`);
  return [...events, ...(names as EventName[])];
}

/** `mm webhooks ls|create|rm|deliveries|redeliver` (admin; docs/webhooks.md). */
export function registerWebhooks(program: Command): void {
  const hooks = program.command('webhooks').description('webhook subscriptions: where events are POSTed, signed (admin)');
  hooks
    .command('ls')
    .description('list subscriptions')
    .action(
      withContext(async (ctx) => {
        const list = await ctx.api.call(ctx.api.client.GET('/api/webhooks/'));
        ctx.result(list, () =>
          say(
            table(
              ['ID', 'URL', 'EVENTS', 'FORMAT', 'ENABLED', 'CREATED'],
              list.webhooks.map((w) => [w.id, w.url, w.events.join(','), w.format, w.enabled ? 'yes' : `no${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`, when(w.created_at)]),
            ),
          ),
        );
      }),
    );
  hooks
    .command('create <url>')
    .description('subscribe a URL to events; prints the signing secret (shown this once)')
    .option('--event <name>', `an event to send (repeatable, or comma-separated): ${EVENTS.join(', ')}`, collectEvent, [])
    .option('--slack', 'send Slack incoming-webhook messages instead of { type, timestamp, data }')
    .option('--disabled', 'create it turned off')
    .action(
      withContext(async (ctx, opts: { event: EventName[]; slack?: boolean; disabled?: boolean }, url: string) => {
        if (opts.event.length === 0) throw new UsageError(`Name at least one --event (${EVENTS.join(', ')}).`);
        const created = await ctx.api.call(
          ctx.api.client.POST('/api/webhooks/', { body: { url, events: opts.event, format: opts.slack ? 'slack' : 'standard', enabled: !opts.disabled } }),
        );
        ctx.result(created, () => {
          say(`Webhook ${created.id} created: ${created.events.join(', ')} → ${created.url} (${created.format}).`);
          say(`Signing secret (shown this once): ${created.secret}`);
        });
      }),
    );
  hooks
    .command('rm <id>')
    .description('delete a subscription and its delivery log')
    .action(
      withContext(async (ctx, _opts, id: string) => {
        await ctx.api.call(ctx.api.client.DELETE('/api/webhooks/{id}/', { params: { path: { id } } }));
        ctx.result({ deleted: id }, () => say(`Deleted webhook ${id}.`));
      }),
    );
  hooks
    .command('deliveries <id>')
    .description("a subscription's delivery log, newest first")
    .option('--status <status>', 'only pending, delivered or failed ones')
    .option('--limit <n>', 'how many (default 50)', '50')
    .action(
      withContext(async (ctx, opts: { status?: string; limit: string }, id: string) => {
        if (opts.status !== undefined && !['pending', 'delivered', 'failed'].includes(opts.status)) throw new UsageError('--status takes pending, delivered or failed.');
        const limit = positiveId(opts.limit, '--limit');
        const page = await ctx.api.call(
          ctx.api.client.GET('/api/webhooks/{id}/deliveries/', {
            params: { path: { id }, query: { limit: Math.min(limit, 1000), ...(opts.status ? { status: opts.status as 'pending' | 'delivered' | 'failed' } : {}) } },
          }),
        );
        ctx.result(page, () =>
          say(
            table(
              ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'CODE', 'NEXT', 'LAST ERROR'],
              page.deliveries.map((d) => [d.id, d.event, d.status, d.attempts, d.last_status_code, when(d.next_attempt_at), d.last_error ? d.last_error.slice(0, 60) : null]),
            ),
          ),
        );
      }),
    );
  hooks
    .command('redeliver <id> <delivery-id>')
    .description('send a delivery again now (same webhook-id)')
    .action(
      withContext(async (ctx, _opts, id: string, deliveryId: string) => {
        const d = await ctx.api.call(
          ctx.api.client.POST('/api/webhooks/{id}/deliveries/{delivery_id}/redeliver/', { params: { path: { id, delivery_id: positiveId(deliveryId, 'delivery id') } } }),
        );
        ctx.result(d, () => say(`Delivery ${d.id} (${d.event}) will be sent again now.`));
      }),
    );
}
