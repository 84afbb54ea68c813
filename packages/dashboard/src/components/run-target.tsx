import { parseLabelPair } from '@mm/api-client';
import { useState } from 'preact/hooks';
import type { Board, Schemas } from '../api/client.ts';
import { BoardPicker } from './board-picker.tsx';
import { checkSelector, replacePair } from './selector-hint.tsx';

/** Where a run goes: one named board, or the first idle board whose labels hold every selector pair. */
export type RunTarget = { mode: 'board'; boardId: string } | { mode: 'selector'; selector: Record<string, string>; priority: number };

/** The execute body the target asks for (contract: `board_id?` or `board_selector?` + `priority`). */
export function runBody(t: RunTarget): Schemas['ExecuteRequest'] {
  if (t.mode === 'board') return t.boardId ? { board_id: t.boardId } : {};
  return { board_selector: t.selector, ...(t.priority ? { priority: t.priority } : {}) };
}

export function selectorMatches(labels: Record<string, string> | undefined, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** Chooses the target: a board from the list, or selector chips (suggested from the boards' labels) and a priority. */
export function RunTargetPicker({ boards, value, onChange }: { boards: Board[]; value: RunTarget; onChange: (t: RunTarget) => void }) {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState('');
  const fleet = boards;
  const known = [...new Set(fleet.flatMap((b) => Object.entries(b.labels ?? {}).map(([k, v]) => `${k}=${v}`)))].sort();
  const selector = value.mode === 'selector' ? value.selector : {};
  const priority = value.mode === 'selector' ? value.priority : 0;
  const matching = fleet.filter((b) => selectorMatches(b.labels, selector));
  const ready = matching.filter((b) => b.status === 'online' && !b.busy && !b.maintenance && b.health !== 'bad');

  function addPair() {
    const pair = parseLabelPair(text);
    if (!pair || !pair[0]) return setProblem('Write a label as key=value, e.g. camera=yes.');
    setProblem('');
    setText('');
    onChange({ mode: 'selector', selector: { ...selector, [pair[0]]: pair[1] }, priority });
  }

  return (
    <div class="stack run-target">
      <fieldset class="row wrap plain">
        <legend class="small muted">Run on</legend>
        <label class="inline-check">
          <input type="radio" name="run-mode" checked={value.mode === 'board'} onChange={() => onChange({ mode: 'board', boardId: boards.length === 1 ? boards[0]!.id : '' })} />
          by name
        </label>
        <label class="inline-check" title="The first idle board (online, in service, not bad) whose labels hold every pair">
          <input type="radio" name="run-mode" checked={value.mode === 'selector'} onChange={() => onChange({ mode: 'selector', selector: {}, priority: 0 })} />
          by labels
        </label>
      </fieldset>
      {value.mode === 'board' ? (
        <BoardPicker id="run-board" boards={boards} value={value.boardId} onChange={(boardId) => onChange({ mode: 'board', boardId })} />
      ) : (
        <div class="stack">
          <div class="row wrap">
            <span class="chips" aria-label="Selector" data-testid="selector-chips">
              {Object.entries(selector).map(([k, v]) => (
                <button
                  key={k}
                  type="button"
                  class="chip chip-filter"
                  onClick={() => onChange({ mode: 'selector', selector: Object.fromEntries(Object.entries(selector).filter(([a]) => a !== k)), priority })}
                >
                  {k}={v} <span aria-hidden="true">×</span>
                  <span class="visually-hidden"> (remove)</span>
                </button>
              ))}
              {Object.keys(selector).length === 0 && <span class="muted small">no labels yet: any board matches</span>}
            </span>
            <label>
              Label
              <input
                value={text}
                list="known-labels"
                placeholder="key=value"
                size={16}
                onInput={(e) => setText((e.target as HTMLInputElement).value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    e.preventDefault();
                    addPair();
                  }
                }}
              />
            </label>
            <datalist id="known-labels">
              {known.map((k) => (
                <option key={k} value={k} />
              ))}
            </datalist>
            <button type="button" onClick={addPair}>
              Add label
            </button>
            <label>
              Priority
              <input
                type="number"
                min={-100}
                max={100}
                step={1}
                value={priority}
                style={{ width: '5.5rem' }}
                onInput={(e) => {
                  const n = Math.round(Number((e.target as HTMLInputElement).value));
                  onChange({ mode: 'selector', selector, priority: Number.isFinite(n) ? Math.max(-100, Math.min(100, n)) : 0 });
                }}
              />
            </label>
          </div>
          <p class="small" data-testid="selector-match" aria-live="polite">
            {matching.length === 0 ? (
              <>
                <span class="error-text">No registered board carries these labels: the server will refuse the run.</span>
                {/* A typo (`sit=lab-1`, `site=lab-9`): the nearest label some board holds, one click to take it. */}
                {checkSelector(selector, fleet).unheld.map((u) =>
                  u.nearest ? (
                    <span key={u.key} class="did-you-mean">
                      {' '}
                      Did you mean <code>{u.nearest}</code> instead of <code>{u.wanted}</code>?{' '}
                      <button type="button" class="link" onClick={() => onChange({ mode: 'selector', selector: replacePair(selector, u.key, u.nearest!), priority })}>
                        Use {u.nearest}
                      </button>
                    </span>
                  ) : null,
                )}
              </>
            ) : (
              `${matching.length} board${matching.length === 1 ? '' : 's'} match, ${ready.length} ready now (online, idle, in service, not bad); the run waits for the first one free.`
            )}
          </p>
          {problem && <p class="error-text small">{problem}</p>}
        </div>
      )}
    </div>
  );
}
