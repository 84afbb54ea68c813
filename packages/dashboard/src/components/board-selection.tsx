import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** Boards ticked on the boards list (by id): kept while the list refreshes or the filters change. */
export interface BoardSelection {
  ids: ReadonlySet<string>;
  toggle: (id: string, on: boolean) => void;
  setAll: (ids: readonly string[], on: boolean) => void;
  clear: () => void;
}

export function useBoardSelection(): BoardSelection {
  const [ids, setIds] = useState<ReadonlySet<string>>(new Set());
  const change = (list: readonly string[], on: boolean) =>
    setIds((cur) => {
      const next = new Set(cur);
      for (const id of list) {
        if (on) next.add(id);
        else next.delete(id);
      }
      return next;
    });
  return { ids, toggle: (id, on) => change([id], on), setAll: change, clear: () => setIds(new Set()) };
}

/**
 * A row of the boards list with a checkbox in front (the selection column): the row itself is
 * drawn by the list, untouched. Without `selection` (people who may not relabel) the row alone.
 */
export function SelectableRow({ id, name, selection, children }: { id: string; name: string; selection: BoardSelection | null; children: ComponentChildren }) {
  if (!selection) return <>{children}</>;
  return (
    <div class="fleet-select">
      <input type="checkbox" aria-label={`Select ${name}`} checked={selection.ids.has(id)} onChange={(e) => selection.toggle(id, (e.target as HTMLInputElement).checked)} />
      {children}
    </div>
  );
}
