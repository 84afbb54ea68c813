/** The board's `sim/speed` label from MM_BOARD_LABELS: a positive number, else 1. */
export function simulatedSpeed(boardLabels: string | undefined): number {
  try {
    const labels = JSON.parse(boardLabels ?? '{}') as Record<string, unknown>;
    const speed = Number(labels['sim/speed']);
    return Number.isFinite(speed) && speed > 0 ? speed : 1;
  } catch {
    return 1;
  }
}

/** What the simulated runner reports about its run (docs/fleet-facts.md). */
export function simulatedMetrics(speed: number): { fps: number; latency_ms: number } {
  const fps = Math.round(30 * speed * 100) / 100;
  return { fps, latency_ms: Math.round((1000 / fps) * 100) / 100 };
}
