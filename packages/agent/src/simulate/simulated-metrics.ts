/** A positive number label of MM_BOARD_LABELS, else undefined. */
function numberLabel(boardLabels: string | undefined, key: string): string | undefined {
  try {
    const labels = JSON.parse(boardLabels ?? '{}') as Record<string, unknown>;
    const value = labels[key];
    return typeof value === 'string' ? value.trim() : undefined;
  } catch {
    return undefined;
  }
}

/** The board's `sim/speed` label from MM_BOARD_LABELS: a positive number, else 1. */
export function simulatedSpeed(boardLabels: string | undefined): number {
  const speed = Number(numberLabel(boardLabels, 'sim/speed'));
  return Number.isFinite(speed) && speed > 0 ? speed : 1;
}

/**
 * The board's `sim/noise` label: the relative noise (standard deviation over the mean) of its
 * metrics, as a fraction (`0.02`) or a percentage (`2%`); 0 (none) when unset or not a number
 * in 0…0.5 (docs/results.md).
 */
export function simulatedNoise(boardLabels: string | undefined): number {
  const raw = numberLabel(boardLabels, 'sim/noise');
  if (raw === undefined || raw === '') return 0;
  const value = raw.endsWith('%') ? Number(raw.slice(0, -1)) / 100 : Number(raw);
  return Number.isFinite(value) && value >= 0 && value <= 0.5 ? value : 0;
}

/** A standard normal draw (Box–Muller) from uniform draws in (0, 1]. */
export function normalDraw(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * What the simulated runner reports about its run (docs/fleet-facts.md, docs/results.md):
 * `fps` = 30 × speed × (1 + noise × Z), Z a standard normal draw clipped to ±4, and
 * `latency_ms` = 1000 / fps. Without noise every run reports the same figures.
 */
export function simulatedMetrics(speed: number, noise = 0, random: () => number = Math.random): { fps: number; latency_ms: number } {
  const z = noise > 0 ? Math.max(-4, Math.min(4, normalDraw(random))) : 0;
  const fps = Math.round(30 * speed * (1 + noise * z) * 100) / 100;
  return { fps, latency_ms: Math.round((1000 / fps) * 100) / 100 };
}
