/**
 * Runs `step(boardId)` one at a time per board, however often it is asked for: a request
 * while a step runs schedules exactly one more step after it, so no trigger is lost and
 * none piles up. The operations service uses it to start each board's next operation.
 */
export class BoardQueue {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly scheduled = new Set<string>();

  constructor(
    private readonly step: (boardId: string) => Promise<void>,
    private readonly onError: (err: unknown, boardId: string) => void,
  ) {}

  kick(boardId: string): void {
    if (this.scheduled.has(boardId)) return;
    this.scheduled.add(boardId);
    const previous = this.chains.get(boardId) ?? Promise.resolve();
    const next = previous.then(async () => {
      this.scheduled.delete(boardId);
      try {
        await this.step(boardId);
      } catch (err) {
        this.onError(err, boardId);
      }
    });
    this.chains.set(boardId, next);
    void next.then(() => {
      if (this.chains.get(boardId) === next) this.chains.delete(boardId);
    });
  }

  /** Resolves when every step asked for so far has run. */
  async idle(): Promise<void> {
    while (this.chains.size) await Promise.all([...this.chains.values()]);
  }
}
