/** A frame as the memory bound sees it: its size, and whether a newer frame of its camera replaced it. */
export interface HeldFrame {
  readonly bytes: number;
  /** Set by `retire`: no longer its camera's newest frame. */
  retired: boolean;
  /** When it was retired (a counter): the older, the further behind its holders are. */
  retiredOrder: number;
}

/** A viewer that may hold a frame: cut when the bound needs the memory back. */
export interface FrameHolder {
  /** Drops the viewer's connection (its unsent frame goes with it); calls `release` before it returns. */
  cut(): void;
}

/**
 * The camera relay's memory bound, in bytes. A viewer is pull-driven and holds at most ONE
 * frame: the one its socket is still writing (from handing it over to the viewer's next read).
 * Frames are shared: every viewer of a camera is handed the same newest Buffer, which the
 * camera keeps anyway. The memory that grows with viewers is the frames they still hold after
 * a newer one replaced them: counted here, each once however many viewers hold it. Past
 * `maxPendingBytes` the viewers holding the oldest such frames (the furthest behind) are cut
 * until it fits. So the relay's memory is at most one newest frame per camera plus
 * `maxPendingBytes`, whatever the number of viewers and whatever the frames' size (the largest
 * allowed is MAX_JPEG_BYTES, 8 MiB), not "one frame per viewer".
 */
export class CameraFrameMemory {
  private readonly holders = new Map<HeldFrame, Set<FrameHolder>>();
  private retiredBytes = 0;
  private retirements = 0;

  constructor(readonly maxPendingBytes: number) {}

  /** Bytes of replaced frames viewers still hold (the bounded part). */
  get pendingBytes(): number {
    return this.retiredBytes;
  }

  /** Bytes of every frame some viewer holds (replaced or newest). */
  get heldBytes(): number {
    let n = 0;
    for (const frame of this.holders.keys()) n += frame.bytes;
    return n;
  }

  /** `holder` was handed `frame` (its previous one, if any, released first). */
  hold(holder: FrameHolder, frame: HeldFrame): void {
    let set = this.holders.get(frame);
    if (!set) {
      set = new Set();
      this.holders.set(frame, set);
      if (frame.retired) this.retiredBytes += frame.bytes;
    }
    set.add(holder);
    if (frame.retired) this.enforce();
  }

  /** `holder`'s socket took `frame` (it read again), or it left. */
  release(holder: FrameHolder, frame: HeldFrame): void {
    const set = this.holders.get(frame);
    if (!set?.delete(holder) || set.size > 0) return;
    this.holders.delete(frame);
    if (frame.retired) this.retiredBytes -= frame.bytes;
  }

  /** A newer frame replaced `frame` (or its camera closed): what viewers still hold of it now counts. */
  retire(frame: HeldFrame): void {
    if (frame.retired) return;
    frame.retired = true;
    frame.retiredOrder = ++this.retirements;
    if (!this.holders.has(frame)) return;
    this.retiredBytes += frame.bytes;
    this.enforce();
  }

  private enforce(): void {
    if (this.retiredBytes <= this.maxPendingBytes) return;
    const oldestFirst = [...this.holders.keys()].filter((f) => f.retired).sort((a, b) => a.retiredOrder - b.retiredOrder);
    for (const frame of oldestFirst) {
      if (this.retiredBytes <= this.maxPendingBytes) return;
      for (const holder of [...(this.holders.get(frame) ?? [])]) holder.cut();
    }
  }
}
