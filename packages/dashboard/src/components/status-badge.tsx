/** A coloured status word; the word itself carries the meaning (not the colour alone). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}
