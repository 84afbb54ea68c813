import { useEffect, useState } from 'preact/hooks';
import type { Operation } from '../api/client.ts';
import { runDuration } from '../lib/run-result.ts';

/**
 * How long a run took, or, while it runs, how long it has been running (counting up each
 * second): a running run never reads "took 0.3 s", which is only how long it had run when
 * the page was drawn.
 */
export function Elapsed({ op, tookWord = 'took' }: { op: Pick<Operation, 'started_at' | 'finished_at' | 'status'>; tookWord?: string }) {
  const running = !!op.started_at && !op.finished_at;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return;
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [running]);
  const d = runDuration(op, now);
  if (!d) return null;
  return running ? <span data-testid="elapsed">running for {d}</span> : <span data-testid="elapsed">{tookWord ? `${tookWord} ${d}` : d}</span>;
}
