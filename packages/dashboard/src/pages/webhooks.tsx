import { useState } from 'preact/hooks';
import { client, unwrap, type Schemas } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { ShownOnce } from '../components/copy-field.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { Pager } from '../components/pager.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { DataTable } from '../components/table-box.tsx';
import { ConfirmButton, submitting } from '../components/table-parts.tsx';
import { ago, formatTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import { useResource } from '../lib/use-resource.ts';

type Webhook = Schemas['Webhook'];
type NewWebhook = Schemas['NewWebhook'];
type Delivery = Schemas['WebhookDelivery'];
type EventName = Schemas['CreateWebhook']['events'][number];

/** The events a subscription may ask for, with what each means (docs/webhooks.md). */
const EVENTS: Array<[EventName, string]> = [
  ['operation.finished', 'an operation ended'],
  ['rollout.finished', 'a rollout is over'],
  ['board.health_changed', "a board's health changed"],
  ['board.offline', 'a board stayed offline'],
  ['board.enrolled', 'a board joined'],
  ['regression.detected', 'a run regressed against its baseline'],
  ['board.recovered', 'a hung board was recovered'],
];

function EventChoices({ chosen, name }: { chosen: readonly string[]; name: string }) {
  return (
    <fieldset class="events-choice">
      <legend>Events</legend>
      {EVENTS.map(([event, what]) => (
        <label key={event} class="check">
          <input type="checkbox" name={name} value={event} defaultChecked={chosen.includes(event)} />
          <span>
            <code>{event}</code> <span class="muted small">{what}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** The events ticked in a form; none is refused here, with the server's kind of problem. */
function eventsOf(f: FormData, name: string): EventName[] {
  const events = f.getAll(name).map(String) as EventName[];
  if (events.length === 0) throw new ApiProblem(400, 'validation_failed', 'Bad Request', 'Choose at least one event.');
  return events;
}

/** Admins: webhook subscriptions — where events are POSTed, signed (docs/webhooks.md). */
export function WebhooksPage() {
  const list = useResource(() => unwrap(client.GET('/api/webhooks/')), [], { pollMs: 10_000 });
  const [created, setCreated] = useState<NewWebhook | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const hooks = list.data?.webhooks;

  const patch = (id: string, body: Schemas['WebhookPatch']) => unwrap(client.PATCH('/api/webhooks/{id}/', { params: { path: { id } }, body }));

  return (
    <section aria-labelledby="webhooks-title" class="stack">
      <h1 id="webhooks-title">Webhooks</h1>
      <p class="muted">
        The server POSTs the events you choose to each URL, signed with its secret (Standard Webhooks: <code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>), or as Slack messages. Failed deliveries are retried for a day.
      </p>
      <form
        class="card stack"
        aria-label="New webhook"
        onSubmit={submitting(async (f) => {
          const events = eventsOf(f, 'events');
          const hook = await unwrap(
            client.POST('/api/webhooks/', { body: { url: String(f.get('url')).trim(), events, format: f.get('format') === 'slack' ? 'slack' : 'standard', enabled: true } }),
          );
          setCreated(hook);
          list.reload();
        }, setError)}
      >
        <h2 class="form-title">New webhook</h2>
        <div class="row wrap align-end">
          <label class="grow">
            URL
            <input name="url" type="url" required placeholder="https://ci.example.org/hooks/model-manager" />
          </label>
          <label>
            Format
            <select name="format">
              <option value="standard">Standard (JSON event)</option>
              <option value="slack">Slack message</option>
            </select>
          </label>
        </div>
        <EventChoices chosen={[]} name="events" />
        <div>
          <button type="submit" class="primary">
            Create webhook
          </button>
        </div>
      </form>
      {created && (
        <ShownOnce
          title="Copy the signing secret now: it is shown this once."
          label="Signing secret"
          value={created.secret}
          testId="new-webhook-secret"
          onDone={() => setCreated(null)}
        />
      )}
      <ErrorBox error={error ?? list.error} onDismiss={() => setError(null)} />
      {hooks && hooks.length === 0 && <p data-testid="no-webhooks">No webhook yet.</p>}
      {hooks && hooks.length > 0 && (
        <DataTable label="Webhooks" columns={['URL', 'Events', 'Format', 'State', '']}>
          {hooks.map((w) => (
            <tr key={w.id} data-testid={`webhook-${w.url}`}>
              <td class="url-cell">
                <Link href={`/admin/webhooks/${w.id}`}>{w.url}</Link>
                <div class="small muted">since {formatTime(w.created_at)}</div>
              </td>
              <td>
                {editing === w.id ? (
                  <form
                    class="stack"
                    aria-label={`Events of ${w.url}`}
                    onSubmit={submitting(async (f) => {
                      const events = eventsOf(f, 'edit-events');
                      await patch(w.id, { events });
                      setEditing(null);
                      list.reload();
                    }, setError)}
                  >
                    <EventChoices chosen={w.events} name="edit-events" />
                    <div class="row">
                      <button type="submit" class="primary">
                        Save events
                      </button>
                      <button type="button" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </div>
                  </form>
                ) : (
                  <span class="chips">
                    {w.events.map((e) => (
                      <span key={e} class="chip">
                        {e}
                      </span>
                    ))}
                  </span>
                )}
              </td>
              <td>{w.format === 'slack' ? 'Slack' : 'Standard'}</td>
              <td>
                <StatusBadge status={w.enabled ? 'on' : 'off'} />
                {w.disabled_reason && <div class="small danger-text">{w.disabled_reason}</div>}
              </td>
              <td>
                <div class="row actions">
                  <button
                    type="button"
                    onClick={() =>
                      void patch(w.id, { enabled: !w.enabled }).then(
                        () => list.reload(),
                        (err: unknown) => setError(err),
                      )
                    }
                  >
                    {w.enabled ? 'Turn off' : 'Turn on'} <span class="visually-hidden">{w.url}</span>
                  </button>
                  {editing !== w.id && (
                    <button type="button" onClick={() => setEditing(w.id)}>
                      Edit events <span class="visually-hidden">of {w.url}</span>
                    </button>
                  )}
                  <ConfirmButton
                    label="Delete"
                    name={w.url}
                    question={`Delete the webhook to ${w.url}? Its delivery log goes with it.`}
                    run={() => unwrap(client.DELETE('/api/webhooks/{id}/', { params: { path: { id: w.id } } }))}
                    onDone={() => list.reload()}
                    onError={setError}
                  />
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

const PAGE = 50;

/** The last error without the status the Answer column already shows (`HTTP 500: boom` → `boom`). */
function errorText(d: Delivery): string {
  const text = d.last_error ?? '';
  const prefix = `HTTP ${d.last_status_code}`;
  return d.last_status_code !== null && text.startsWith(prefix) ? text.slice(prefix.length).replace(/^:\s*/, '') : text;
}
const STATUSES = ['pending', 'delivered', 'failed'] as const;

/** One subscription and its delivery log, newest first, with Redeliver on each delivery. */
export function WebhookPage({ id }: { id: string }) {
  const [page, setPage] = useState(0);
  const [status, setStatus] = useState<'' | (typeof STATUSES)[number]>('');
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const hook = useResource(() => unwrap(client.GET('/api/webhooks/{id}/', { params: { path: { id } } })), [id], { pollMs: 10_000 });
  const log = useResource(
    () =>
      unwrap(
        client.GET('/api/webhooks/{id}/deliveries/', {
          params: { path: { id }, query: { limit: PAGE, offset: page * PAGE, ...(status ? { status } : {}) } },
        }),
      ),
    [id, page, status],
    { pollMs: 3000 },
  );
  const w: Webhook | null = hook.data;
  return (
    <section aria-labelledby="webhook-title" class="stack">
      <p class="small">
        <Link href="/admin/webhooks">← Webhooks</Link>
      </p>
      <h1 id="webhook-title" class="url-title">
        {w ? w.url : 'Webhook'}
      </h1>
      <ErrorBox error={error ?? hook.error ?? log.error} onDismiss={() => setError(null)} />
      {w && (
        <dl class="metric-list card">
          <div>
            <dt>State</dt>
            <dd>
              <StatusBadge status={w.enabled ? 'on' : 'off'} /> {w.disabled_reason && <span class="small danger-text">{w.disabled_reason}</span>}
            </dd>
          </div>
          <div>
            <dt>Format</dt>
            <dd>{w.format === 'slack' ? 'Slack' : 'Standard'}</dd>
          </div>
          <div>
            <dt>Events</dt>
            <dd class="chips">
              {w.events.map((e) => (
                <span key={e} class="chip">
                  {e}
                </span>
              ))}
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatTime(w.created_at)}</dd>
          </div>
        </dl>
      )}
      <div class="row wrap page-head">
        <h2>Deliveries</h2>
        <label class="inline">
          Status
          <select
            value={status}
            onChange={(e) => {
              setStatus((e.target as HTMLSelectElement).value as typeof status);
              setPage(0);
            }}
          >
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="small muted" aria-live="polite">
        {note}
      </p>
      {log.data && log.data.deliveries.length === 0 && <p data-testid="no-deliveries">No delivery yet: nothing this webhook wants has happened since it was made.</p>}
      {log.data && log.data.deliveries.length > 0 && (
        <>
          <DataTable label="Deliveries" columns={['Event', 'Status', 'Attempts', 'Answer', 'Last attempt', 'Next attempt', '']}>
            {log.data.deliveries.map((d: Delivery) => (
              <tr key={d.id} data-testid={`delivery-${d.id}`}>
                <td class="nowrap">
                  <code>{d.event}</code>
                  <div class="small muted">#{d.id}</div>
                </td>
                <td>
                  <StatusBadge status={d.status} />
                </td>
                <td>{d.attempts}</td>
                <td class="answer-cell">
                  {d.last_status_code !== null ? <span class="nowrap">HTTP {d.last_status_code}</span> : d.attempts > 0 ? <span class="muted">no answer</span> : '—'}
                  {errorText(d) && <div class="small muted last-error">{errorText(d)}</div>}
                </td>
                <td class="nowrap">{d.last_attempt_at ? ago(d.last_attempt_at) : '—'}</td>
                <td class="nowrap">{d.next_attempt_at ? formatTime(d.next_attempt_at) : '—'}</td>
                <td>
                  <ConfirmButton
                    label="Redeliver"
                    kind="primary"
                    name={`delivery ${d.id}`}
                    question=""
                    run={() => unwrap(client.POST('/api/webhooks/{id}/deliveries/{delivery_id}/redeliver/', { params: { path: { id, delivery_id: d.id } } }))}
                    onDone={() => {
                      setNote(`Delivery #${d.id} will be sent again now.`);
                      log.reload();
                    }}
                    onError={setError}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
          <Pager page={page} total={log.data.total} pageSize={PAGE} onPage={setPage} />
        </>
      )}
      {w === null && hook.error === null && <p class="loading">Loading…</p>}
      {hook.error !== null && (
        <button type="button" class="link" onClick={() => navigate('/admin/webhooks')}>
          Back to the webhooks
        </button>
      )}
    </section>
  );
}
