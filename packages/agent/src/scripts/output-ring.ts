/** The last `capacity` bytes of a script's output (stdout and stderr interleaved as they came). */
export class OutputRing {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly capacity = 64 * 1024) {}

  push(chunk: Buffer | string): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.chunks.push(b);
    this.bytes += b.length;
    while (this.bytes > this.capacity && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.bytes - this.capacity;
      if (first.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
