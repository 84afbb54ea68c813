import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Board, type Operation } from '../api/client.ts';
import { formatTime } from '../lib/format.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { useBoards } from './board-picker.tsx';
import { ConfirmButton } from './confirm.tsx';
import { ErrorBox } from './error-box.tsx';
import { Link } from './link.tsx';
import { myName } from './reservation-actions.tsx';
import { StatusBadge } from './status-badge.tsx';

type Action = 'on' | 'off' | 'cycle';
type Power = NonNullable<Board['power']>;

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** What each button does, asked before it is done (a power cut stops whatever runs, without a shutdown). */
const ACTIONS: Array<{ action: Action; label: string; yes: string; question: (name: string) => string }> = [
  {
    action: 'on',
    label: 'Power on',
    yes: 'Yes, switch it on',
    question: (name) => `Switch ${name} on? Its outlet is switched on through the lab host; the board boots and links again.`,
  },
  {
    action: 'cycle',
    label: 'Power cycle',
    yes: 'Yes, cut and restore its power',
    question: (name) => `Power-cycle ${name}? Its power is cut and restored: whatever runs on it stops without a clean shutdown, and it is offline while it boots.`,
  },
  {
    action: 'off',
    label: 'Power off',
    yes: 'Yes, switch it off',
    question: (name) =>
      `Switch ${name} off? Its power is cut: whatever runs on it stops without a clean shutdown. It stays off (not counted as a hang) until someone switches it on.`,
  },
];

/** Why a power operation failed, in words, with what to do (the codes of docs/power.md). */
function failureText(op: Operation): string {
  const e = op.error;
  if (!e) return `${op.status}.`;
  if (e.code === 'power_controller_offline') return `${e.message} Check that the lab host's agent is running, then try again.`;
  if (e.code === 'pdu_error') return `${e.message} Check pdudaemon on the lab host (its configuration names this PDU and outlet).`;
  if (e.code === 'power_not_configured') return `${e.message}`;
  return `${e.message} (${e.code})`;
}

/**
 * The board page's power section (docs/power.md): its power controller (a lab host relaying to
 * pdudaemon, the PDU and outlet), On / Cycle / Off for an admin or the holder of its
 * reservation, each confirmed first and followed to its end; how to set power up when the
 * board has none, and the form an admin sets it with.
 */
export function BoardPower({ board, onChange }: { board: Board; onChange: (b: Board) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState(false);
  const [started, setStarted] = useState<Operation | null>(null);
  const holder = !!board.reservation && canOperate.value && board.reservation.user === myName();
  const mayControl = isAdmin.value || holder;
  const power = board.power;

  async function control(action: Action) {
    setError(null);
    // 202 at once: the operation is followed below, so the page is never stuck on a long cycle.
    const op = await unwrap(client.POST('/api/boards/{id}/power/', { params: { path: { id: board.id } }, headers: { prefer: 'respond-async' }, body: { action } }));
    setStarted(op);
  }

  async function save(next: Power | null) {
    setError(null);
    try {
      onChange(await unwrap(client.PATCH('/api/boards/{id}/', { params: { path: { id: board.id } }, body: { power: next } })));
      setEditing(false);
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }

  return (
    <section class="card stack" aria-labelledby="board-power-title" data-testid="board-power">
      <h2 id="board-power-title">Power</h2>
      {power ? (
        <>
          <dl class="facts">
            <dt>Controller</dt>
            <dd data-testid="power-controller">
              <ControllerName id={power.controller_board_id} /> relays to pdudaemon: PDU <code>{power.pdu_hostname}</code>, outlet{' '}
              <code>{power.pdu_port}</code>
            </dd>
          </dl>
          {mayControl ? (
            <div class="row wrap" data-testid="power-actions">
              {ACTIONS.map((a) => (
                <ConfirmButton
                  key={a.action}
                  label={a.label}
                  question={a.question(board.name)}
                  yes={a.yes}
                  primary={a.action === 'on'} // asked first too, but it cuts nothing: not a red button
                  disabled={!!started && !FINAL.has(started.status)}
                  action={() => control(a.action)}
                />
              ))}
            </div>
          ) : (
            <p class="muted small">Switching its power needs the admin role, or holding its reservation.</p>
          )}
          {started && <PowerProgress key={started.id} op={started} onUpdate={setStarted} />}
        </>
      ) : (
        <NotConfigured admin={isAdmin.value} />
      )}
      {isAdmin.value &&
        (editing ? (
          <PowerForm board={board} onSave={save} onCancel={() => setEditing(false)} />
        ) : (
          <div class="row wrap">
            <button type="button" onClick={() => setEditing(true)}>
              {power ? 'Change power settings' : 'Set up power'}
            </button>
            {power && (
              <ConfirmButton
                label="Remove power settings"
                question={`Remove ${board.name}'s power settings? Its power can no longer be switched from here, and a hang is no longer recovered by a power cycle.`}
                yes="Yes, remove them"
                action={async () => {
                  if (!(await save(null))) throw new Error('not removed');
                }}
              />
            )}
          </div>
        ))}
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </section>
  );
}

/** The lab host by name, linked to its page (its id until the boards list answers). */
function ControllerName({ id }: { id: string }) {
  const { boards } = useBoards();
  const lab = boards?.find((b) => b.id === id);
  return (
    <span>
      lab host <Link href={`/boards/${id}`}>{lab?.name ?? id}</Link>
      {lab && lab.status !== 'online' && (
        <>
          {' '}
          <StatusBadge status={lab.status} />
        </>
      )}
    </span>
  );
}

/** The power operation just started, followed until it ends (pdudaemon's answer, or why it failed). */
function PowerProgress({ op, onUpdate }: { op: Operation; onUpdate: (op: Operation) => void }) {
  useEffect(() => {
    if (FINAL.has(op.status)) return;
    const t = setTimeout(async () => {
      try {
        onUpdate(await unwrap(client.GET('/api/operations/{id}/', { params: { path: { id: op.id } } })));
      } catch {
        onUpdate({ ...op }); // try again on the next tick
      }
    }, 700);
    return () => clearTimeout(t);
  }, [op]);
  const answer = (op.result as { pdu_answer?: string } | null)?.pdu_answer;
  return (
    <p data-testid="power-result" role="status" class={op.status === 'failed' ? 'error-text' : undefined}>
      <Link href={`/operations/${op.id}`}>
        {op.kind.replace('_', ' ')} #{op.id}
      </Link>{' '}
      <StatusBadge status={op.status} />{' '}
      {op.status === 'succeeded'
        ? `pdudaemon answered “${answer ?? 'OK'}” at ${formatTime(op.finished_at)}.`
        : FINAL.has(op.status)
          ? failureText(op)
          : 'the lab host is relaying it to pdudaemon…'}
    </p>
  );
}

function NotConfigured({ admin }: { admin: boolean }) {
  return (
    <div class="stack" data-testid="power-not-configured">
      <p>
        <strong>No power controller.</strong> This board's power cannot be switched from here, and if it hangs it is not power-cycled
        automatically: it stays <em>unresponsive</em> until someone walks to it.
      </p>
      <p class="small">To set it up (docs/power.md, “Setting up a lab”):</p>
      <ol class="small steps">
        <li>
          Run <code>pdudaemon</code> on a machine of the lab network, with the board's PDU (or relay, or USB hub) in its{' '}
          <code>pdus</code> configuration.
        </li>
        <li>
          On a board agent that can reach it, set <code>MM_PDUDAEMON_URL=http://127.0.0.1:16421</code> and restart it: that agent is
          the <em>lab host</em>. It should not be powered by a PDU it controls.
        </li>
        <li>{admin ? 'Name the lab host, the PDU and the outlet here (Set up power).' : 'Ask an admin to name the lab host, the PDU and the outlet here.'}</li>
      </ol>
    </div>
  );
}

/** The admin's form: lab host (another board), the PDU's name in pdudaemon's configuration, the outlet. */
function PowerForm({ board, onSave, onCancel }: { board: Board; onSave: (p: Power) => Promise<boolean>; onCancel: () => void }) {
  const { boards, error } = useBoards();
  const [controller, setController] = useState(board.power?.controller_board_id ?? '');
  const [pdu, setPdu] = useState(board.power?.pdu_hostname ?? '');
  const [port, setPort] = useState(board.power ? String(board.power.pdu_port) : '');
  const others = (boards ?? []).filter((b) => b.id !== board.id);
  // Boards already named as another board's controller are lab hosts: offered first.
  const hosting = new Map<string, number>();
  for (const b of boards ?? []) if (b.power) hosting.set(b.power.controller_board_id, (hosting.get(b.power.controller_board_id) ?? 0) + 1);
  others.sort((a, b) => (hosting.get(b.id) ?? 0) - (hosting.get(a.id) ?? 0) || a.name.localeCompare(b.name));
  return (
    <form
      class="stack"
      aria-label="Power settings"
      onSubmit={async (e) => {
        e.preventDefault();
        await onSave({ controller_board_id: controller, pdu_hostname: pdu.trim(), pdu_port: Number(port) });
      }}
    >
      <ErrorBox error={error} />
      <div class="row wrap align-end">
        <label>
          Lab host
          <select value={controller} required onChange={(e) => setController((e.target as HTMLSelectElement).value)}>
            <option value="">Choose the board whose agent has MM_PDUDAEMON_URL…</option>
            {others.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name} ({b.status}
                {hosting.has(b.id) ? `, lab host of ${hosting.get(b.id)}` : ''})
              </option>
            ))}
          </select>
        </label>
        <label>
          PDU (its name in pdudaemon)
          <input value={pdu} required maxLength={200} placeholder="lab-pdu-1" onInput={(e) => setPdu((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Outlet
          <input type="number" min={0} step={1} required value={port} placeholder="3" onInput={(e) => setPort((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <div class="row wrap">
        <button type="submit" class="primary">
          Save power settings
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
