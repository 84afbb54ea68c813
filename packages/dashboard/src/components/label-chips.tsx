/**
 * Labels as chips (`key=value`); the agent's read-only `mm/` labels are drawn quieter.
 * With `onPick`, each chip is a button (e.g. "filter by this label").
 */
export function LabelChips({ labels, onPick, max }: { labels: Record<string, string> | undefined; onPick?: (key: string, value: string) => void; max?: number }) {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => Number(a.startsWith('mm/')) - Number(b.startsWith('mm/')) || a.localeCompare(b));
  if (entries.length === 0) return <span class="muted small">no labels</span>;
  const shown = max === undefined ? entries : entries.slice(0, max);
  return (
    <span class="chips">
      {shown.map(([k, v]) => {
        const cls = `chip${k.startsWith('mm/') ? ' chip-system' : ''}`;
        const text = `${k}=${v}`;
        return onPick ? (
          <button key={k} type="button" class={cls} title={`Show boards labelled ${text}`} onClick={() => onPick(k, v)}>
            {text}
          </button>
        ) : (
          <span key={k} class={cls}>
            {text}
          </span>
        );
      })}
      {shown.length < entries.length && <span class="muted small">+{entries.length - shown.length}</span>}
    </span>
  );
}
