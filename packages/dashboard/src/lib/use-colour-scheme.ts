import { useEffect, useState } from 'preact/hooks';

export type ColourScheme = 'light' | 'dark';

function current(): ColourScheme {
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/**
 * The page's colour scheme, followed live. A canvas or chart draws in colours read when it
 * draws (the text colour, the accent), so whatever draws depends on this and draws again when
 * the person's system switches to dark or back.
 */
export function useColourScheme(): ColourScheme {
  const [scheme, setScheme] = useState(current);
  useEffect(() => {
    const query = window.matchMedia?.('(prefers-color-scheme: dark)');
    if (!query) return;
    const changed = () => setScheme(current());
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return scheme;
}
