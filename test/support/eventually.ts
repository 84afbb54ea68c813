/** Polls until `check` passes (returns without throwing), or rethrows its last failure after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 30_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
