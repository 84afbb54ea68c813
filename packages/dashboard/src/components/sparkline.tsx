import { useEffect, useRef } from 'preact/hooks';
import { useColourScheme } from '../lib/use-colour-scheme.ts';

/**
 * A tiny line of recent values on a canvas: one path, no library, so a page of 1,000 boards
 * draws only the few dozen on screen and redraws one when its values change.
 */
export function Sparkline({ values, width = 96, height = 24, label }: { values: readonly number[]; width?: number; height?: number; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  // Drawn in the accent colour of the scheme it was drawn in: a switch draws it again.
  const scheme = useColourScheme();
  useEffect(() => {
    const el = canvas.current;
    const g = el?.getContext('2d');
    if (!el || !g) return;
    const dpr = window.devicePixelRatio || 1;
    if (el.width !== width * dpr) {
      el.width = width * dpr;
      el.height = height * dpr;
    }
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    if (values.length === 0) return;
    g.fillStyle = getComputedStyle(el).color;
    if (values.length === 1) {
      // One sample so far: a dot at the middle height until the next one draws a line.
      g.fillRect(width - 3, height / 2 - 1.5, 3, 3);
      return;
    }
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of values) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    // At least 5 degrees of range: a steady board draws a flat line, not amplified noise.
    const span = Math.max(hi - lo, 5);
    const mid = (hi + lo) / 2;
    const y = (v: number) => height - 2 - ((v - (mid - span / 2)) / span) * (height - 4);
    const dx = (width - 2) / (values.length - 1);
    g.beginPath();
    values.forEach((v, i) => (i ? g.lineTo(1 + i * dx, y(v)) : g.moveTo(1, y(v))));
    g.lineWidth = 1.5;
    g.strokeStyle = getComputedStyle(el).color;
    g.stroke();
  }, [values, width, height, scheme]);
  return <canvas ref={canvas} class="sparkline" style={{ width: `${width}px`, height: `${height}px` }} role="img" aria-label={label} />;
}
