import { StringDecoder } from 'node:string_decoder';

/**
 * A session's recording in asciicast v2 (https://docs.asciinema.org/manual/asciicast/v2/): a
 * header line, then one `[seconds, "o", text]` line per piece of output and `[seconds, "r",
 * "COLSxROWS"]` per resize. Keystrokes are not recorded (passwords typed at a prompt would
 * be); what the shell echoes is. At most `maxBytes`: past it, one last line says the recording
 * stopped and nothing more is kept (the session goes on).
 */
export class AsciicastRecorder {
  private readonly lines: string[] = [];
  private size = 0;
  private readonly decoder = new StringDecoder('utf8');
  truncated = false;

  constructor(
    private readonly startedAtMs: number,
    header: { cols: number; rows: number; title: string },
    private readonly maxBytes: number,
  ) {
    this.push(
      JSON.stringify({ version: 2, width: header.cols, height: header.rows, timestamp: Math.floor(startedAtMs / 1000), title: header.title, env: { TERM: 'xterm-256color' } }),
      true,
    );
  }

  output(atMs: number, bytes: Buffer): void {
    const text = this.decoder.write(bytes);
    if (text) this.event(atMs, 'o', text);
  }

  resize(atMs: number, cols: number, rows: number): void {
    this.event(atMs, 'r', `${cols}x${rows}`);
  }

  get bytes(): number {
    return this.size;
  }

  /** The whole recording (newline-delimited JSON). */
  finish(): Buffer {
    return Buffer.from(this.lines.join(''), 'utf8');
  }

  private event(atMs: number, kind: 'o' | 'r', data: string): void {
    if (this.truncated) return;
    const line = JSON.stringify([Math.max(0, (atMs - this.startedAtMs) / 1000), kind, data]);
    if (this.size + Buffer.byteLength(line) + 1 > this.maxBytes) {
      this.truncated = true;
      const note = JSON.stringify([Math.max(0, (atMs - this.startedAtMs) / 1000), 'o', `\r\n[recording stopped at ${Math.round(this.maxBytes / 1024)} KiB (MM_TERMINAL_RECORDING_MAX_KB)]\r\n`]);
      this.push(note, true);
      return;
    }
    this.push(line, false);
  }

  private push(line: string, force: boolean): void {
    const n = Buffer.byteLength(line) + 1;
    if (!force && this.size + n > this.maxBytes) return;
    this.lines.push(`${line}\n`);
    this.size += n;
  }
}
