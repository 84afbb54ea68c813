import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from '../api/problem.ts';
import { loadSession } from './session.ts';

/** After a network failure, how soon to try again (the server may be restarting). */
export const RETRY_MS = 2000;

export interface Resource<T> {
  /** The last answer; kept while a reload runs or fails. */
  data: T | null;
  error: unknown;
  /** Loads again now. */
  reload: () => void;
  /** Replaces the data shown (e.g. with a write's answer) without asking the server. */
  set: (data: T) => void;
}

export interface ResourceOptions {
  /** Loads again every `pollMs` while the tab is visible (0: only when asked). */
  pollMs?: number;
  /** False: do not load (e.g. the role may not). */
  enabled?: boolean;
}

function isNetworkFailure(err: unknown): boolean {
  return err instanceof ApiProblem && err.code === 'network_error';
}

/**
 * One thing a page shows, loaded from the API, with the load/error/poll scaffolding every page
 * needs: a hidden tab does not poll (it loads at once when shown again), and a page whose
 * server could not be reached keeps trying every RETRY_MS and, once it answers again, checks
 * the sign-in too (the server may have been restarted with other accounts), so it recovers by
 * itself. `deps` are what `load` depends on: a change loads again and drops a stale answer.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[], opts: ResourceOptions = {}): Resource<T> {
  const { pollMs = 0, enabled = true } = opts;
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    if (!enabled) return;
    let stale = false;
    let timer: number | undefined;
    let waitingForTab = false;
    let down = false;
    const run = async () => {
      clearTimeout(timer);
      waitingForTab = false;
      let failedOnNetwork = false;
      try {
        const d = await loadRef.current();
        if (stale) return;
        setData(d);
        setError(null);
        if (down) void loadSession();
        down = false;
      } catch (err) {
        if (stale) return;
        setError(err);
        failedOnNetwork = isNetworkFailure(err);
        down ||= failedOnNetwork;
      }
      const wait = failedOnNetwork ? RETRY_MS : pollMs;
      if (wait) timer = window.setTimeout(() => (document.visibilityState === 'visible' ? void run() : (waitingForTab = true)), wait);
    };
    const onVisible = () => document.visibilityState === 'visible' && waitingForTab && void run();
    const onOnline = () => down && void run();
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener('online', onOnline);
    void run();
    return () => {
      stale = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('online', onOnline);
    };
  }, [...deps, tick, enabled, pollMs]);

  return { data, error, reload: () => setTick((t) => t + 1), set: setData };
}
