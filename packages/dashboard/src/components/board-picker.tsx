import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Board } from '../api/client.ts';

/** A board to run on: the only one is chosen for you; with several, you pick. */
export function useBoards(pollMs = 0): { boards: Board[] | null; error: unknown; reload: () => void } {
  const [boards, setBoards] = useState<Board[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let stop = false;
    const load = () =>
      unwrap(client.GET('/api/boards/', { params: { query: { limit: 1000 } } }))
        .then((d) => {
          if (!stop) {
            setBoards(d.boards);
            setError(null);
          }
        })
        .catch((e) => !stop && setError(e));
    void load();
    // Live status without reloading: poll while the tab is visible.
    const timer = pollMs ? setInterval(() => document.visibilityState === 'visible' && void load(), pollMs) : undefined;
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [pollMs, tick]);
  return { boards, error, reload: () => setTick((t) => t + 1) };
}

export function BoardPicker({ boards, value, onChange, id }: { boards: Board[]; value: string; onChange: (id: string) => void; id: string }) {
  return (
    <label for={id}>
      Board{' '}
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {boards.length !== 1 && <option value="">Choose a board…</option>}
        {boards.map((b) => (
          <option key={b.id} value={b.id}>
            {b.name} ({b.status}
            {b.busy ? ', busy' : ''})
          </option>
        ))}
      </select>
    </label>
  );
}
