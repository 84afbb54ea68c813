import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox } from './error-box.tsx';

/**
 * A page loaded on first visit (its own chunk), so the first page's bundle stays small:
 * "Loading…" meanwhile, the failure in words if the chunk cannot be fetched.
 */
export function lazyPage<P extends object>(load: () => Promise<FunctionComponent<P>>): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | undefined;
  return function LazyPage(props: P) {
    const [Page, setPage] = useState(() => loaded);
    const [error, setError] = useState<unknown>(null);
    useEffect(() => {
      if (Page) return;
      load().then(
        (c) => {
          loaded = c;
          setPage(() => c);
        },
        setError,
      );
    }, []);
    if (error) return <ErrorBox error={error} />;
    return Page ? <Page {...props} /> : <p aria-busy="true">Loading…</p>;
  };
}
