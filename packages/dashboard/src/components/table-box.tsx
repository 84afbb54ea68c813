import type { ComponentChildren } from 'preact';

/**
 * A table that may be wider than a phone: it scrolls sideways inside this box (the page does
 * not), and the box can take the keyboard focus so the arrow keys scroll it too.
 */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
