import type { ComponentChildren } from 'preact';

/**
 * A table that may be wider than a phone: it scrolls sideways inside its box (the page does
 * not), and the box takes the keyboard focus so the arrow keys scroll it too. `columns` are
 * the headings (`''`: an actions column, named for screen readers only; `false`: left out).
 * `stacked`: on a phone each row becomes a block of its cells, each cell named by its
 * `data-label` (for tables of a few long values, which a sideways scroll would only hide).
 */
export function DataTable({
  label,
  columns,
  caption,
  stacked,
  children,
}: {
  label: string;
  columns: Array<string | false>;
  caption?: ComponentChildren;
  stacked?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table class={stacked ? 'stack-narrow' : undefined}>
        {caption && <caption class="muted small">{caption}</caption>}
        <thead>
          <tr>
            {columns.map(
              (c, i) =>
                c !== false && (
                  <th key={i} scope="col">
                    {c || <span class="visually-hidden">Actions</span>}
                  </th>
                ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
