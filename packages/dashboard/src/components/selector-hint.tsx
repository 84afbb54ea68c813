import type { Board } from '../api/client.ts';
import { plural } from '../lib/format.ts';
import { checkSelector, replacePair } from '../lib/selector-check.ts';

export { checkSelector, replacePair, type SelectorCheck } from '../lib/selector-check.ts';

/**
 * What a selector matches, said next to its field: "3 boards match", or that none does with a
 * "did you mean site=lab-1?" and a button to take the suggestion. `onUse` gets the corrected selector.
 */
export function SelectorHint({
  selector,
  boards,
  onUse,
  testId = 'selector-hint',
}: {
  selector: Record<string, string>;
  boards: readonly Board[] | null;
  onUse?: (selector: Record<string, string>) => void;
  testId?: string;
}) {
  if (!boards) return null;
  const { matching, unheld } = checkSelector(selector, boards);
  const empty = Object.keys(selector).length === 0;
  return (
    <div class="small selector-hint" data-testid={testId} aria-live="polite">
      {matching.length > 0 ? (
        <span>
          {empty ? `Every board: ${plural(matching.length, 'board')}` : `${plural(matching.length, 'board')} ${matching.length === 1 ? 'matches' : 'match'}`}
          {matching.length <= 5 && `: ${matching.map((b) => b.name).join(', ')}`}.
        </span>
      ) : (
        <>
          <span class="error-text">
            {unheld.length > 0
              ? `No board carries ${unheld.map((u) => u.wanted).join(' or ')}.`
              : 'No board carries all of these labels together (each is on some board, not on the same one).'}
          </span>
          {unheld
            .filter((u) => u.nearest)
            .map((u) => (
              <span key={u.key} class="did-you-mean">
                {' '}
                Did you mean <code>{u.nearest}</code>?{' '}
                {onUse && (
                  <button type="button" class="link" onClick={() => onUse(replacePair(selector, u.key, u.nearest!))}>
                    Use {u.nearest}
                  </button>
                )}
              </span>
            ))}
        </>
      )}
    </div>
  );
}
