import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Rows drawn beyond the window's edges, so a quick scroll does not show blank space. */
const OVERSCAN = 8;

/**
 * A list of fixed-height rows of which only those in (or near) the window are in the DOM:
 * 1,000 boards cost the same few dozen elements as 30. The page scrolls as usual (spacers
 * keep the full height), so find-in-page misses off-screen rows; the filters cover that.
 */
export function VirtualList<T>({ items, rowHeight, label, render, keyOf }: { items: readonly T[]; rowHeight: number; label: string; render: (item: T) => ComponentChildren; keyOf: (item: T) => string }) {
  const box = useRef<HTMLUListElement>(null);
  const [range, setRange] = useState({ from: 0, to: 40 });
  useEffect(() => {
    let frame = 0;
    const measure = () => {
      frame = 0;
      const el = box.current;
      if (!el) return;
      const top = el.getBoundingClientRect().top;
      const from = Math.max(0, Math.floor(-top / rowHeight) - OVERSCAN);
      const to = Math.min(items.length, Math.ceil((window.innerHeight - top) / rowHeight) + OVERSCAN);
      setRange((r) => (r.from === from && r.to === to ? r : { from, to }));
    };
    const schedule = () => (frame ||= requestAnimationFrame(measure));
    measure();
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
    };
  }, [items.length, rowHeight]);
  const from = Math.min(range.from, items.length);
  const to = Math.min(Math.max(range.to, from), items.length);
  return (
    <ul ref={box} class="virtual-list" aria-label={label} style={{ paddingTop: `${from * rowHeight}px`, paddingBottom: `${(items.length - to) * rowHeight}px` }}>
      {items.slice(from, to).map((item) => (
        <li key={keyOf(item)} style={{ height: `${rowHeight}px` }}>
          {render(item)}
        </li>
      ))}
    </ul>
  );
}
