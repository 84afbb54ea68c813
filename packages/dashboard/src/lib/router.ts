import { signal } from '@preact/signals';

/** The client-side route: the path of the page shown; History API, no hash. */
export const currentPath = signal(location.pathname);
export const currentQuery = signal(location.search);

export function navigate(to: string, replace = false): void {
  const url = new URL(to, location.origin);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  currentPath.value = url.pathname;
  currentQuery.value = url.search;
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  currentPath.value = location.pathname;
  currentQuery.value = location.search;
});

/** Matches `/invocations/:id` style patterns; returns the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i]!;
    const seg = s[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(seg);
    else if (part !== seg) return null;
  }
  return params;
}
