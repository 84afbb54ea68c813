import { client, unwrap, type Board } from '../api/client.ts';
import { useResource } from '../lib/use-resource.ts';

/** The registered boards, polled every `pollMs` (0: once) while the tab is visible. */
export function useBoards(pollMs = 0, enabled = true): { boards: Board[] | null; error: unknown; reload: () => void } {
  const { data, error, reload } = useResource(() => unwrap(client.GET('/api/boards/', { params: { query: { limit: 1000 } } })), [], { pollMs, enabled });
  return { boards: data?.boards ?? null, error, reload };
}

/** A board to run on: the only one is chosen for you; with several, you pick. */
export function BoardPicker({ boards, value, onChange, id, note }: { boards: Board[]; value: string; onChange: (id: string) => void; id: string; note?: (b: Board) => string | undefined }) {
  return (
    <label for={id}>
      Board{' '}
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {boards.length !== 1 && <option value="">Choose a board…</option>}
        {boards.map((b) => (
          <option key={b.id} value={b.id}>
            {b.name} ({b.status}
            {b.busy ? ', busy' : ''}){note?.(b) ? ` · ${note(b)}` : ''}
          </option>
        ))}
      </select>
    </label>
  );
}
