/**
 * A forward-only reader of the protobuf wire format over a stream of chunks, holding at most
 * one chunk plus what a caller asks to keep (small fields). Large length-delimited fields are
 * skipped as the bytes pass, never gathered: the memory a parse takes does not grow with the
 * input (docs/accelerators.md, "The model's needs").
 */

export const WireType = { varint: 0, fixed64: 1, bytes: 2, startGroup: 3, endGroup: 4, fixed32: 5 } as const;

/** The input is not protobuf (or not the message expected); `offset` is where it went wrong. */
export class WireFormatError extends Error {
  override readonly name = 'WireFormatError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} (at byte ${offset})`);
  }
}

function asAsync<T>(it: Iterator<T>): AsyncIterator<T> {
  return { next: async () => it.next() };
}

export class WireReader {
  private chunk: Buffer = Buffer.alloc(0);
  private at = 0;
  /** Bytes consumed before the current chunk. */
  private base = 0;
  private ended = false;
  private readonly source: AsyncIterator<Uint8Array>;

  constructor(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
    this.source = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : asAsync(source[Symbol.iterator]());
  }

  /** Bytes consumed so far: the offset of the next byte. */
  get position(): number {
    return this.base + this.at;
  }

  /** Whether the input has no byte left. */
  async atEnd(): Promise<boolean> {
    return !(await this.fill());
  }

  /** Makes at least one byte available; false at the end of the input. */
  private async fill(): Promise<boolean> {
    while (this.at >= this.chunk.length) {
      if (this.ended) return false;
      const step = await this.source.next();
      if (step.done) {
        this.ended = true;
        return false;
      }
      this.base += this.chunk.length;
      this.chunk = Buffer.isBuffer(step.value) ? step.value : Buffer.from(step.value.buffer, step.value.byteOffset, step.value.byteLength);
      this.at = 0;
    }
    return true;
  }

  private async byte(): Promise<number> {
    if (!(await this.fill())) throw new WireFormatError('unexpected end of the file', this.position);
    return this.chunk[this.at++]!;
  }

  /** A varint, as a bigint (a uint64 needs all 64 bits). */
  async varint64(): Promise<bigint> {
    const start = this.position;
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      // Fast path: the byte is in the current chunk.
      const b = this.at < this.chunk.length ? this.chunk[this.at++]! : await this.byte();
      value |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        if (value >= 1n << 64n) throw new WireFormatError('a varint longer than 64 bits', start);
        return value;
      }
    }
    throw new WireFormatError('a varint longer than 10 bytes', start);
  }

  /** A varint that must fit a JavaScript number exactly (tags, lengths, enums). */
  async varint(): Promise<number> {
    const start = this.position;
    // Fast path for the common one- and two-byte varints.
    if (this.at + 1 < this.chunk.length) {
      const b0 = this.chunk[this.at]!;
      if (b0 < 0x80) {
        this.at += 1;
        return b0;
      }
      const b1 = this.chunk[this.at + 1]!;
      if (b1 < 0x80) {
        this.at += 2;
        return (b0 & 0x7f) | (b1 << 7);
      }
    }
    const value = await this.varint64();
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new WireFormatError('a length or tag too large', start);
    return Number(value);
  }

  /** `length` bytes, gathered: only for small fields (callers check the length first). */
  async bytes(length: number): Promise<Buffer> {
    if (this.at + length <= this.chunk.length) {
      const out = this.chunk.subarray(this.at, this.at + length);
      this.at += length;
      return Buffer.from(out);
    }
    const parts: Buffer[] = [];
    let left = length;
    while (left > 0) {
      if (!(await this.fill())) throw new WireFormatError('unexpected end of the file', this.position);
      const take = Math.min(left, this.chunk.length - this.at);
      // Copied: a source may hand the same buffer again with the next chunk.
      parts.push(Buffer.from(this.chunk.subarray(this.at, this.at + take)));
      this.at += take;
      left -= take;
    }
    return Buffer.concat(parts);
  }

  /** Passes `length` bytes without keeping them. */
  async skip(length: number): Promise<void> {
    let left = length;
    while (left > 0) {
      if (!(await this.fill())) throw new WireFormatError('unexpected end of the file (a field runs past it)', this.position);
      const take = Math.min(left, this.chunk.length - this.at);
      this.at += take;
      left -= take;
    }
  }

  /** Skips the value of a field of this wire type; `end` bounds a length-delimited one. */
  async skipValue(wireType: number, end: number): Promise<void> {
    switch (wireType) {
      case WireType.varint:
        await this.varint64();
        return;
      case WireType.fixed64:
        await this.skip(8);
        return;
      case WireType.fixed32:
        await this.skip(4);
        return;
      case WireType.bytes: {
        const length = await this.varint();
        if (this.position + length > end) throw new WireFormatError('a field runs past the end of its message', this.position);
        await this.skip(length);
        return;
      }
      default:
        // Groups (3, 4) are deprecated and XIR never writes them; 6 and 7 do not exist.
        throw new WireFormatError(`a field of wire type ${wireType}, which XIR graphs do not use`, this.position);
    }
  }
}
