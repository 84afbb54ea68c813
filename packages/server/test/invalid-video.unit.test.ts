import { describe, expect, it } from 'vitest';
import { videoContainerOf } from '../src/invocations/video-check.ts';

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('videoContainerOf (issue 39, item 15)', () => {
  it('names the common containers by their magic numbers', () => {
    expect(videoContainerOf(bytes([0, 0, 0, 0x18], 'ftypisom'))).toBe('mp4');
    expect(videoContainerOf(bytes([0, 0, 0, 0x14], 'ftypqt  '))).toBe('mp4');
    expect(videoContainerOf(bytes([0, 0, 0, 8], 'wide'))).toBe('mov');
    expect(videoContainerOf(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f]))).toBe('matroska');
    expect(videoContainerOf(bytes('RIFF', [1, 2, 3, 4], 'AVI LIST'))).toBe('avi');
    const ts = Buffer.alloc(600);
    ts[0] = ts[188] = ts[376] = 0x47;
    expect(videoContainerOf(ts)).toBe('mpegts');
    expect(videoContainerOf(bytes([0, 0, 1, 0xba, 0x44]))).toBe('mpeg');
    expect(videoContainerOf(bytes('FLV', [1, 5]))).toBe('flv');
    expect(videoContainerOf(bytes([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6]))).toBe('asf');
    expect(videoContainerOf(bytes('OggS', [0]))).toBe('ogg');
    expect(videoContainerOf(bytes('YUV4MPEG2 W640'))).toBe('yuv4mpeg');
    expect(videoContainerOf(bytes([0, 0, 0, 1, 0x67, 0x42]))).toBe('h264');
  });

  it('refuses text, JSON, images, archives, a WAV file and nothing at all', () => {
    for (const head of [
      bytes('hello, this is a text file\n'),
      bytes('{"schema": "mm-runner/1"}'),
      bytes([0x89], 'PNG\r\n\x1a\n'),
      bytes([0xff, 0xd8, 0xff, 0xe0]),
      bytes('PK', [3, 4, 20, 0]),
      bytes('RIFF', [1, 2, 3, 4], 'WAVEfmt '),
      Buffer.alloc(0),
      bytes([0x47, 1, 2, 3]),
    ]) {
      expect(videoContainerOf(head), head.toString('latin1')).toBeUndefined();
    }
  });
});
