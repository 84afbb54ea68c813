/**
 * The events a webhook subscription may ask for (docs/webhooks.md). Each is sent as
 * `{ type, timestamp, data }` (or as a Slack message); what `data` holds is in the docs.
 */
export const WEBHOOK_EVENT_TYPES = [
  'operation.finished',
  'rollout.finished',
  'board.health_changed',
  'board.offline',
  'board.enrolled',
  'regression.detected',
  'board.recovered',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (t: string): t is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** An event as stored and sent: the body of a standard delivery is `{ type, timestamp, data }`. */
export interface WebhookEvent {
  id: string;
  type: string;
  /** When it happened (ISO 8601). */
  timestamp: string;
  data: Record<string, unknown>;
}
