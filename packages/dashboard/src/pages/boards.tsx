import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { parseLabelPair } from '@mm/api-client';
import { client, unwrap, type Board, type Operation } from '../api/client.ts';
import { hottest } from '../lib/fleet-fields.ts';
import { HealthBadge } from '../components/health-badge.tsx';
import { ScriptFailures } from '../components/script-failures.tsx';
import { ReservationBadge } from '../components/reservation-badge.tsx';
import { LabelChips } from '../components/label-chips.tsx';
import { Sparkline } from '../components/sparkline.tsx';
import { VirtualList } from '../components/virtual-list.tsx';
import { fleetQuery, matchesFleetFilters, parseFleetFilters, type FleetFilters } from '../lib/fleet-filters.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { seedTelemetryHistory, temperatureHistory } from '../lib/telemetry-history.ts';
import { useFleet } from '../lib/use-fleet.ts';
import { CopyField } from '../components/copy-field.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { BoardStatus, neverConnected } from '../components/board-status.tsx';
import { SelectableRow, useBoardSelection } from '../components/board-selection.tsx';
import { BulkLabelBar } from '../components/bulk-label-bar.tsx';
import { ago, plural } from '../lib/format.ts';
import { isAdmin } from '../lib/session.ts';

/**
 * A row's height: fixed, so the list draws only the rows in the window (1,000 boards stay
 * fast). On a phone the row stacks (name and state; labels; work and temperature), taller.
 */
const ROW_PX = 64;
const PHONE_ROW_PX = 112;
const PHONE = '(max-width: 800px)';
const POLL_MS = 5000;
/** `lab-2` before `lab-10`. */
const byName = new Intl.Collator(undefined, { numeric: true });

/** The fleet at a glance: one row per board, filtered by the URL's query, updated live. */
/** Whether a media query matches, kept up to date. */
function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia?.(query).matches ?? false);
  useEffect(() => {
    const q = window.matchMedia?.(query);
    if (!q) return;
    const on = () => setMatches(q.matches);
    on();
    q.addEventListener('change', on);
    return () => q.removeEventListener('change', on);
  }, [query]);
  return matches;
}

export function BoardsPage() {
  const fleet = useFleet(POLL_MS);
  const phone = useMedia(PHONE);
  const filters = parseFleetFilters(currentQuery.value);
  const [, redraw] = useState(0);
  const selection = useBoardSelection();
  const data = fleet.data;
  const boards = data?.boards;
  const shown = useMemo(() => (boards?.filter((b) => matchesFleetFilters(b, filters)) ?? []).sort((a, b) => byName.compare(a.name, b.name)), [boards, currentQuery.value]);
  const setFilters = (next: Partial<FleetFilters>) => navigate(`/boards${fleetQuery({ ...filters, ...next })}`, true);
  const addLabel = (k: string, v: string) => {
    if (!filters.labels.some(([a, b]) => a === k && b === v)) setFilters({ labels: [...filters.labels, [k, v]] });
  };
  return (
    <section aria-labelledby="boards-title" class="stack">
      <div class="page-head">
        <h1 id="boards-title">Boards</h1>
        {isAdmin.value && <RegisterBoard onDone={fleet.reload} />}
      </div>
      <ErrorBox error={fleet.error} />
      {boards && boards.length === 0 && (
        <p>No board is registered yet.{isAdmin.value ? ' Register one with “Register a board” above, then start its agent with the command shown.' : ' Ask an administrator to register one.'}</p>
      )}
      {boards && boards.length > 0 && (
        <>
          <FleetSummary boards={boards} unassigned={data.unassigned.length} />
          <FleetFilterBar filters={filters} onChange={setFilters} />
          <p class="muted small" aria-live="polite" data-testid="fleet-count">
            {shown.length === boards.length ? plural(boards.length, 'board') : `${shown.length} of ${plural(boards.length, 'board')}`} · updated every {POLL_MS / 1000} s
          </p>
          {isAdmin.value && <BulkLabelBar shown={shown} all={boards} selection={selection} onDone={fleet.reload} />}
          {shown.length === 0 ? (
            <p>No board matches these filters.</p>
          ) : (
            <>
            <FleetHead />
            <VirtualList
              items={shown}
              rowHeight={phone ? PHONE_ROW_PX : ROW_PX}
              label="Boards"
              keyOf={(b) => b.id}
              render={(b) => (
                <SelectableRow id={b.id} name={b.name} selection={isAdmin.value ? selection : null}>
                  <FleetRow board={b} running={data.running.get(b.id)} queued={b.queued ?? data.queuedFor.get(b.id) ?? 0} onLabel={addLabel} onHistory={() => redraw((n) => n + 1)} />
                </SelectableRow>
              )}
            />
            </>
          )}
        </>
      )}
    </section>
  );
}

/** Counts a person reads first: how many are up, bad, in maintenance, busy; selector work waiting. */
function FleetSummary({ boards, unassigned }: { boards: Board[]; unassigned: number }) {
  let online = 0;
  let bad = 0;
  let maintenance = 0;
  let busy = 0;
  for (const b of boards) {
    if (b.status === 'online') online++;
    if (b.health === 'bad') bad++;
    if (b.maintenance) maintenance++;
    if (b.busy) busy++;
  }
  return (
    <p class="fleet-summary" data-testid="fleet-summary">
      <strong>{online}</strong> of {boards.length} online · <strong>{busy}</strong> busy · <strong class={bad ? 'bad' : ''}>{bad}</strong> bad ·{' '}
      <strong>{maintenance}</strong> in maintenance
      {unassigned > 0 && (
        <>
          {' '}
          · <Link href="/operations?status=queued">{unassigned} waiting for a matching board</Link>
        </>
      )}
    </p>
  );
}

function FleetFilterBar({ filters, onChange }: { filters: FleetFilters; onChange: (f: Partial<FleetFilters>) => void }) {
  const [label, setLabel] = useState('');
  const [labelError, setLabelError] = useState('');
  const [q, setQ] = useState(filters.q);
  const timer = useRef<number>();
  return (
    <form
      class="row wrap filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        const pair = parseLabelPair(label);
        if (!pair || !pair[0]) return setLabelError('Write a label as key=value.');
        setLabelError('');
        setLabel('');
        onChange({ labels: [...filters.labels, pair] });
      }}
    >
      <label>
        Name
        <input
          type="search"
          value={q}
          size={12}
          onInput={(e) => {
            const v = (e.target as HTMLInputElement).value;
            setQ(v);
            clearTimeout(timer.current);
            timer.current = window.setTimeout(() => onChange({ q: v }), 200);
          }}
        />
      </label>
      <label>
        Status
        <select value={filters.status} onChange={(e) => onChange({ status: (e.target as HTMLSelectElement).value })}>
          <option value="">any</option>
          {['online', 'offline', 'rebooting', 'pending', 'busy', 'maintenance'].map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Health
        <select value={filters.health} onChange={(e) => onChange({ health: (e.target as HTMLSelectElement).value })}>
          <option value="">any</option>
          {['good', 'bad', 'unknown'].map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Label
        <input value={label} placeholder="key=value" size={14} onInput={(e) => setLabel((e.target as HTMLInputElement).value)} aria-describedby="label-filter-error" />
      </label>
      <button type="submit">Add label filter</button>
      {filters.labels.length > 0 && (
        <span class="chips" aria-label="Label filters">
          {filters.labels.map(([k, v]) => (
            <button key={`${k}=${v}`} type="button" class="chip chip-filter" onClick={() => onChange({ labels: filters.labels.filter(([a, b]) => a !== k || b !== v) })}>
              {k}={v} <span aria-hidden="true">×</span>
              <span class="visually-hidden"> (remove this filter)</span>
            </button>
          ))}
        </span>
      )}
      <span id="label-filter-error" class="small error-text">
        {labelError}
      </span>
    </form>
  );
}

/**
 * The columns' names above the rows (the rows are a list, drawn a window at a time, not a
 * table: the names are for the eye; each row's cells say what they are to a screen reader).
 * Hidden on a phone, where the row stacks its cells.
 */
function FleetHead() {
  return (
    <div class="fleet-head" aria-hidden="true" data-testid="fleet-head">
      <div>Board</div>
      <div>Status and health</div>
      <div>Labels</div>
      <div>Operation</div>
      <div>Temperature</div>
    </div>
  );
}

/**
 * A board's labels in the lines its row has: a chip that does not fit whole is hidden whole
 * (never cut in half), and "+N" beside them, always in view, says how many are hidden (all
 * of them in its title). Measured after each layout and when the row's width changes.
 */
function FleetLabels({ labels, onPick }: { labels: Record<string, string> | undefined; onPick: (k: string, v: string) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const [hidden, setHidden] = useState<string[]>([]);
  const key = JSON.stringify(labels ?? {});
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const fit = () => {
      // Fractional boxes: a chip a fraction of a pixel over the edge is cut too.
      const limit = el.getBoundingClientRect().bottom;
      const out: string[] = [];
      for (const chip of el.querySelectorAll<HTMLElement>('.chip')) {
        chip.style.visibility = '';
        if (chip.getBoundingClientRect().bottom > limit + 0.01) {
          chip.style.visibility = 'hidden';
          out.push(chip.textContent ?? '');
        }
      }
      setHidden((was) => (was.join('\n') === out.join('\n') ? was : out));
    };
    fit();
    const watch = typeof ResizeObserver === 'function' ? new ResizeObserver(fit) : undefined;
    watch?.observe(el);
    return () => watch?.disconnect();
  }, [key]);
  return (
    <>
      <div class="fleet-chips" ref={box}>
        <LabelChips labels={labels} onPick={onPick} />
      </div>
      {hidden.length > 0 && (
        <span class="muted small fleet-more" title={hidden.join('\n')} data-testid="labels-more">
          +{hidden.length}
          <span class="visually-hidden"> more labels: {hidden.join(', ')}</span>
        </span>
      )}
    </>
  );
}

/** One board: status, health (reason on hover), labels, what it runs, its queue, its temperature. */
function FleetRow({ board: b, running, queued, onLabel, onHistory }: { board: Board; running: Operation | undefined; queued: number; onLabel: (k: string, v: string) => void; onHistory: () => void }) {
  useEffect(() => (b.telemetry ? seedTelemetryHistory(b.id, onHistory) : undefined), [b.id, !!b.telemetry]);
  const temps = temperatureHistory(b.id);
  const hot = hottest(b.telemetry);
  const p = running?.progress;
  const pct = p && p.bytes_total ? Math.round((100 * p.bytes_done) / p.bytes_total) : undefined;
  return (
    <div class={`fleet-row${b.maintenance ? ' in-maintenance' : ''}`} data-testid={`board-${b.name}`}>
      <div class="fleet-name">
        <Link href={`/boards/${b.id}`}>{b.name}</Link>
        <div class="muted small">{b.status === 'online' ? b.hostname ?? '' : neverConnected(b) ? 'never connected' : `seen ${ago(b.last_seen_at)}`}</div>
      </div>
      <div class="fleet-state">
        <BoardStatus board={b} />
        {b.maintenance && <span class="badge badge-maintenance">maintenance</span>}
        <ReservationBadge board={b} />
        <HealthBadge health={b.health} reason={b.health_reason} />
        <ScriptFailures board={b} />
        {b.health === 'bad' && b.health_reason && <div class="small health-reason" title={b.health_reason}>{b.health_reason}</div>}
      </div>
      <div class="fleet-labels">
        <FleetLabels labels={b.labels} onPick={onLabel} />
      </div>
      <div class="fleet-op small">
        {running ? (
          <>
            <Link href={`/operations/${running.id}`}>
              #{running.id} {running.kind}
            </Link>{' '}
            <span class="muted">{p?.phase}</span>
            {pct !== undefined && <progress max={100} value={pct} aria-label={`Operation ${running.id} progress`} />}
          </>
        ) : b.current_operation_id ? (
          <Link href={`/operations/${b.current_operation_id}`}>#{b.current_operation_id}</Link>
        ) : b.status === 'pending' ? (
          <span class="muted">pending</span>
        ) : (
          <span class="muted">idle</span>
        )}
        {queued > 0 && <div class="muted">{queued} queued</div>}
      </div>
      <div class="fleet-temp small">
        {hot !== null && b.status !== 'online' ? (
          // Offline: the last reading, greyed, with its age (not as if current).
          <span class="muted stale-temp" data-testid={`stale-temp-${b.name}`} title={`last reading ${b.telemetry?.at ?? ''}`}>
            <Sparkline values={temps} label={`${b.name} temperature, last reading ${hot.toFixed(1)} °C`} />
            {hot.toFixed(0)} °C, {ago(b.telemetry?.at ?? b.last_seen_at)}
          </span>
        ) : hot !== null ? (
          <>
            <Sparkline values={temps} label={`${b.name} temperature, latest ${hot.toFixed(1)} °C`} />
            <span>{hot.toFixed(0)} °C</span>
          </>
        ) : (
          <span class="muted">no telemetry</span>
        )}
      </div>
    </div>
  );
}

function RegisterBoard({ onDone }: { onDone: () => void }) {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<(Board & { token: string; install_command: string }) | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (created) {
    // The server's one line: fetches install-agent.sh from it, installs the package for the board's architecture.
    const command = created.install_command;
    return (
      <div class="card stack" role="region" aria-labelledby="reg-done">
        <h2 id="reg-done">Board “{created.name}” registered</h2>
        <p>
          <strong>Copy the token now: it is shown this once.</strong>
        </p>
        <CopyField label="Token" value={created.token} testId="board-token" />
        <CopyField
          label="Install command (run it on the board; set MM_RUNNER in /etc/mm-agent/mm-agent.env afterwards, or add --runner)"
          value={command}
          testId="install-command"
          rows={3}
        />
        <div class="row">
          <button
            type="button"
            onClick={() => {
              setCreated(null);
              setOpen(false);
            }}
          >
            Done
          </button>
        </div>
      </div>
    );
  }
  if (!open)
    return (
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        Register a board
      </button>
    );
  return (
    <form
      class="card stack"
      aria-label="Register a board"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        try {
          setCreated(await unwrap(client.POST('/api/boards/', { body: { name: String(f.get('name')) } })));
          onDone();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <label>
        Board name
        <input name="name" required autoFocus />
      </label>
      <ErrorBox error={error} />
      <div class="row">
        <button type="submit" class="primary">
          Register
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
