import type { WebhookEvent } from './event-types.ts';

/**
 * What a delivery's body is (docs/webhooks.md, "Payloads"): `standard` is the event as
 * `{ type, timestamp, data }`; `slack` is a Slack incoming-webhook message (a `section` in
 * mrkdwn and a `context` line with a link back to the dashboard, plus `text` for
 * notifications), so a Slack channel can be a subscription's URL as it is.
 */

export function standardBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/** Slack's mrkdwn needs &, < and > escaped (everything else is shown as written). */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const SECTION_MAX = 2900;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

interface Message {
  /** mrkdwn, already escaped. */
  text: string;
  /** Plain text for notifications. */
  fallback: string;
  /** A dashboard path to link to. */
  path?: string | undefined;
}

const STATUS_EMOJI: Record<string, string> = {
  succeeded: ':white_check_mark:',
  failed: ':x:',
  cancelled: ':no_entry_sign:',
  aborted: ':octagonal_sign:',
};

function boardName(data: Obj): string {
  const board = obj(data.board);
  return str(board.name) ?? str(data.board_name) ?? str(board.id) ?? str(data.board_id) ?? 'a board';
}

function boardPath(data: Obj): string | undefined {
  const id = str(obj(data.board).id) ?? str(data.board_id);
  return id ? `/boards/${encodeURIComponent(id)}` : undefined;
}

function messageOf(event: WebhookEvent): Message {
  const data = event.data;
  switch (event.type) {
    case 'operation.finished': {
      const op = obj(data.operation);
      const status = str(op.status) ?? 'finished';
      const error = obj(op.error);
      const where = data.board ? ` on *${slackEscape(boardName(data))}*` : '';
      const why = str(error.message) ? `\n>${slackEscape(`${str(error.code) ?? 'error'}: ${str(error.message)}`)}` : '';
      const plain = `Operation #${str(op.id) ?? '?'} (${str(op.kind) ?? '?'}) ${status}${data.board ? ` on ${boardName(data)}` : ''}`;
      return {
        text: `${STATUS_EMOJI[status] ?? ':information_source:'} Operation *#${slackEscape(str(op.id) ?? '?')}* (${slackEscape(str(op.kind) ?? '?')}) *${slackEscape(status)}*${where}${why}`,
        fallback: plain,
        path: str(op.id) ? `/operations/${str(op.id)}` : undefined,
      };
    }
    case 'rollout.finished': {
      const r = obj(data.rollout);
      const status = str(data.status) ?? str(r.status) ?? 'finished';
      const counts = obj(r.counts);
      const tally = ['succeeded', 'failed', 'cancelled', 'skipped']
        .map((k) => (typeof counts[k] === 'number' && counts[k] ? `${counts[k] as number} ${k}` : ''))
        .filter(Boolean)
        .join(', ');
      const plain = `Rollout #${str(r.id) ?? '?'} (${str(r.kind) ?? '?'}) ${status}${tally ? `: ${tally}` : ''}`;
      return {
        text: `${STATUS_EMOJI[status] ?? ':information_source:'} Rollout *#${slackEscape(str(r.id) ?? '?')}* (${slackEscape(str(r.kind) ?? '?')}) *${slackEscape(status)}*${tally ? `: ${slackEscape(tally)}` : ''}`,
        fallback: plain,
        path: str(r.id) ? `/rollouts/${str(r.id)}` : undefined,
      };
    }
    case 'board.health_changed': {
      const health = str(data.health) ?? 'unknown';
      const reason = str(data.reason);
      const emoji = health === 'bad' ? ':warning:' : health === 'good' ? ':large_green_circle:' : ':grey_question:';
      return {
        text: `${emoji} Board *${slackEscape(boardName(data))}* is now *${slackEscape(health)}*${str(data.previous_health) ? ` (was ${slackEscape(str(data.previous_health)!)})` : ''}${reason ? `\n>${slackEscape(reason)}` : ''}`,
        fallback: `Board ${boardName(data)} is now ${health}${reason ? `: ${reason}` : ''}`,
        path: boardPath(data),
      };
    }
    case 'board.offline': {
      const since = str(data.offline_since);
      return {
        text: `:red_circle: Board *${slackEscape(boardName(data))}* is offline${since ? ` since ${slackEscape(since)}` : ''}`,
        fallback: `Board ${boardName(data)} is offline${since ? ` since ${since}` : ''}`,
        path: boardPath(data),
      };
    }
    case 'board.enrolled': {
      const labels = Object.entries(obj(obj(data.board).labels))
        .filter(([k]) => !k.startsWith('mm/'))
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ');
      return {
        text: `:new: Board *${slackEscape(boardName(data))}* joined the fleet${labels ? ` (${slackEscape(labels)})` : ''}`,
        fallback: `Board ${boardName(data)} joined the fleet`,
        path: boardPath(data),
      };
    }
    case 'board.recovered': {
      const summary = str(data.summary) ?? str(data.outcome);
      return {
        text: `:adhesive_bandage: Board *${slackEscape(boardName(data))}* recovered${summary ? `: ${slackEscape(summary)}` : ''}`,
        fallback: `Board ${boardName(data)} recovered${summary ? `: ${summary}` : ''}`,
        path: boardPath(data),
      };
    }
    case 'regression.detected': {
      const summary = str(data.summary) ?? str(data.message);
      const opId = str(data.operation_id) ?? str(obj(data.operation).id);
      const rolloutId = str(data.rollout_id) ?? str(obj(data.rollout).id);
      return {
        text: `:chart_with_downwards_trend: *Regression detected*${str(data.baseline) ? ` against baseline *${slackEscape(str(data.baseline)!)}*` : ''}${summary ? `\n${slackEscape(summary)}` : ''}`,
        fallback: `Regression detected${summary ? `: ${summary}` : ''}`,
        path: rolloutId ? `/rollouts/${rolloutId}` : opId ? `/operations/${opId}` : boardPath(data),
      };
    }
    default: {
      const facts = Object.entries(data)
        .filter(([, v]) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        .slice(0, 8)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(', ');
      return { text: `*${slackEscape(event.type)}*${facts ? `\n${slackEscape(facts)}` : ''}`, fallback: event.type, path: boardPath(data) };
    }
  }
}

/** The Slack message of an event; `dashboardUrl` is the dashboard's origin (MM_PUBLIC_URL), links go there. */
export function slackBody(event: WebhookEvent, dashboardUrl: string): string {
  const m = messageOf(event);
  const base = dashboardUrl.replace(/\/+$/, '');
  const link = `${base}${m.path ?? '/'}`;
  const text = m.text.length > SECTION_MAX ? `${m.text.slice(0, SECTION_MAX)}…` : m.text;
  return JSON.stringify({
    text: m.fallback,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: `<${link}|Open in Model Manager> · ${slackEscape(event.type)} · ${slackEscape(event.timestamp)}` }],
      },
    ],
  });
}
