import { describe, expect, it } from 'vitest';
import { boundaryOf, formatMjpegPart, MjpegPartReader, type MjpegPart } from '../src/mjpeg-parts.ts';

const bodies = [Buffer.from('first\r\n--mmframe inside the body'), Buffer.alloc(5000, 7), Buffer.from('x')];

function read(bytes: Buffer, chunk: number, boundary = 'mmframe'): MjpegPart[] {
  const out: MjpegPart[] = [];
  const r = new MjpegPartReader(boundary, (p) => out.push(p));
  for (let at = 0; at < bytes.length; at += chunk) r.push(bytes.subarray(at, at + chunk));
  return out;
}

describe('MjpegPartReader: multipart/x-mixed-replace into parts', () => {
  it('reads parts by Content-Length in any chunking (a boundary inside a body is just bytes)', () => {
    const stream = Buffer.concat([Buffer.from('preamble\r\n'), ...bodies.map((b, i) => formatMjpegPart(b, 1000 + i))]);
    for (const chunk of [1, 3, 64, 100_000]) {
      const parts = read(stream, chunk);
      expect(parts.map((p) => p.body.toString('latin1'))).toEqual(bodies.map((b) => b.toString('latin1')));
      expect(parts.map((p) => p.headers['x-capture-time'])).toEqual(['1000', '1001', '1002']);
    }
  });

  it('reads parts without Content-Length up to the next boundary line', () => {
    const part = (body: string) => `--cam\r\nContent-Type: image/jpeg\r\n\r\n${body}\r\n`;
    const parts = read(Buffer.from(part('one') + part('two') + part('three') + '--cam\r\n'), 2, 'cam');
    expect(parts.map((p) => p.body.toString())).toEqual(['one', 'two', 'three']);
  });

  it('finds the boundary in a content type, quoted or with dashes', () => {
    expect(boundaryOf('multipart/x-mixed-replace; boundary=mmframe')).toBe('mmframe');
    expect(boundaryOf('multipart/x-mixed-replace;boundary="a b"')).toBe('a b');
    expect(boundaryOf('multipart/x-mixed-replace; boundary=--frame')).toBe('frame');
    expect(boundaryOf('image/jpeg')).toBeUndefined();
  });

  it('skips a part that declares more than the cap and keeps reading', () => {
    const out: MjpegPart[] = [];
    const r = new MjpegPartReader('mmframe', (p) => out.push(p), 100);
    r.push(Buffer.from('--mmframe\r\nContent-Length: 999999\r\n\r\n'));
    r.push(formatMjpegPart(Buffer.from('ok'), 1));
    expect(out.map((p) => p.body.toString())).toEqual(['ok']);
  });
});
