import type { Health } from '../lib/fleet-fields.ts';

/** The board's health word (`good`, `bad`, `unknown`); the reason on hover and for screen readers. */
export function HealthBadge({ health, reason }: { health: Health | null | undefined; reason?: string | null | undefined }) {
  const h = health ?? 'unknown';
  return (
    <span class={`badge health-${h}`} title={reason ?? undefined}>
      {h}
      {reason && <span class="visually-hidden">: {reason}</span>}
    </span>
  );
}
