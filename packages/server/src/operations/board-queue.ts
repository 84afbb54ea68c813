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
    this.chain(boardId, () => {
      this.scheduled.delete(boardId);
      return this.step(boardId);
    });
  }

  /** Runs `work` in the board's turn, after what was asked for before it (an operation claimed elsewhere, to start). */
  run(boardId: string, work: () => Promise<void>): void {
    this.chain(boardId, work);
  }

  private chain(boardId: string, work: () => Promise<void>): void {
    const previous = this.chains.get(boardId) ?? Promise.resolve();
    const next = previous.then(async () => {
      try {
        await work();
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
