import { ManualClock } from '@mm/protocol';
import { formatMjpegPart, MAX_JPEG_BYTES, mjpegContentType } from '@mm/webcam';
import { describe, expect, it } from 'vitest';
import type { BoardLink } from '../src/agent-link/board-link.ts';
import { CameraRelay, DEFAULT_CAMERA_RELAY_OPTIONS, type CameraRelayOptions } from '../src/device-relay/camera-relay.ts';
import type { ProxyRelay } from '../src/device-relay/proxy-relay.ts';
import { ApiError } from '../src/errors.ts';

/**
 * The camera relay's bounds (issue 46, "Also seen": 200 viewers cost ~5 s of server CPU to
 * open and, with the largest allowed frames, "one frame each" reached gigabytes): viewers per
 * camera and per user are capped, and the frames viewers still hold are bounded in bytes.
 * The upstream is an honest fake of the proxy: an MJPEG body this test writes frames into.
 */
const target = { boardId: 'board-1', scriptId: 'webcam', port: 8080 };
const MiB = 1024 * 1024;

function jpeg(bytes: number, n: number): Buffer {
  const b = Buffer.alloc(bytes, n & 0xff);
  b[0] = 0xff;
  b[1] = 0xd8;
  b[bytes - 2] = 0xff;
  b[bytes - 1] = 0xd9;
  return b;
}

function relayWithCamera(opts: Partial<CameraRelayOptions>) {
  let camera!: ReadableStreamDefaultController<Uint8Array>;
  const proxy = {
    forward: async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start: (c) => {
            camera = c;
          },
        }),
        { status: 200, headers: { 'content-type': mjpegContentType() } },
      ),
  } as unknown as ProxyRelay;
  const relay = new CameraRelay({ connection: () => ({}) as BoardLink }, proxy, { ...DEFAULT_CAMERA_RELAY_OPTIONS, clock: new ManualClock(), ...opts });
  let sent = 0;
  /** The camera sends a frame; resolves once the relay has it. */
  const frame = async (bytes = 2048) => {
    camera.enqueue(formatMjpegPart(jpeg(bytes, ++sent), Date.now()));
    while (relay.framesRelayed(target.boardId, target.scriptId) < sent) await new Promise((r) => setImmediate(r));
  };
  return { relay, frame };
}

const attach = (relay: CameraRelay, viewer: string) => relay.attach(target, new AbortController().signal, { viewer });

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('camera relay limits', () => {
  it('caps viewers per user (429) and per camera (503), counting viewers still waiting for the upstream; a place that frees is taken again', async () => {
    const { relay, frame } = relayWithCamera({ maxViewersPerCamera: 3, maxViewersPerUser: 2 });
    // Asked together, before the upstream answered: the caps count them already.
    const first = [attach(relay, 'user:a'), attach(relay, 'user:a'), attach(relay, 'user:b')];
    const tooMany = await refusal(attach(relay, 'user:a'));
    expect([tooMany.status, tooMany.code, tooMany.headers['retry-after']]).toEqual([429, 'too_many_camera_viewers', '5']);
    const full = await refusal(attach(relay, 'user:c'));
    expect([full.status, full.code, full.headers['retry-after']]).toEqual([503, 'camera_full', '5']);
    const bodies = await Promise.all(first);
    expect(relay.viewerCount(target.boardId, target.scriptId)).toBe(3);
    await frame();
    // A viewer that leaves gives its place back (to anyone).
    await bodies[0]!.cancel();
    expect(relay.viewerCount(target.boardId, target.scriptId)).toBe(2);
    const again = await attach(relay, 'user:c');
    expect((await refusal(attach(relay, 'user:d'))).code).toBe('camera_full');
    // Refused attaches took nothing: with every viewer gone, every place is free again.
    for (const b of [bodies[1]!, bodies[2]!, again]) await b.cancel();
    expect(relay.viewerCount(target.boardId, target.scriptId)).toBe(0);
    const back = await Promise.all([attach(relay, 'user:a'), attach(relay, 'user:a'), attach(relay, 'user:d')]);
    for (const b of back) await b.cancel();
    relay.close();
  });

  it('bounds the frames viewers hold in bytes: with the largest frames, stalled viewers furthest behind are cut, the others keep theirs', async () => {
    const maxPendingBytes = 16 * MiB; // the smallest the setting allows: two of the largest frames
    const { relay, frame } = relayWithCamera({ maxPendingBytes, maxViewersPerUser: 100 });
    const big = MAX_JPEG_BYTES - 1024; // the largest frames the relay passes on
    const stalled: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
    const ended: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      const reader = (await attach(relay, `user:${i}`)).getReader();
      await frame(big);
      // Reads one frame and then nothing: its socket would be writing that frame forever.
      expect((await reader.read()).value!.byteLength).toBeGreaterThan(big);
      stalled.push(reader);
      ended.push(false);
      void reader.closed.catch(() => (ended[i] = true));
      expect(relay.pendingFrameBytes()).toBeLessThanOrEqual(maxPendingBytes);
    }
    await frame(big);
    await new Promise((r) => setImmediate(r));
    // Without the bound six viewers held six different 8 MiB frames (48 MiB, and growing with
    // every viewer); now the replaced frames they hold stay within 16 MiB.
    expect(relay.pendingFrameBytes()).toBeLessThanOrEqual(maxPendingBytes);
    expect(relay.heldFrameBytes()).toBeLessThanOrEqual(maxPendingBytes + big + 1024);
    // The oldest holders were cut (their streams failed); the last two are still there.
    expect(ended).toEqual([true, true, true, true, false, false]);
    expect(relay.viewerCount(target.boardId, target.scriptId)).toBe(2);
    relay.close();
  });

  it('counts a frame many viewers hold once, and never cuts a viewer that keeps reading', async () => {
    const { relay, frame } = relayWithCamera({ maxPendingBytes: 16 * MiB, maxViewersPerCamera: 50, maxViewersPerUser: 50 });
    const big = 1 * MiB;
    const readers = await Promise.all(Array.from({ length: 40 }, async (_, i) => (await attach(relay, `user:${i}`)).getReader()));
    await frame(big);
    // All forty take the same frame and stall: one frame held, not forty.
    for (const r of readers) await r.read();
    const reading = (await attach(relay, 'user:reader')).getReader();
    await reading.read();
    for (let i = 0; i < 10; i++) {
      const got = reading.read();
      await frame(big);
      await got;
    }
    // The one frame forty stalled viewers hold, replaced ten times since: counted once.
    expect(relay.pendingFrameBytes()).toBeGreaterThan(big);
    expect(relay.pendingFrameBytes()).toBeLessThan(big + 1024);
    expect(relay.viewerCount(target.boardId, target.scriptId)).toBe(41);
    relay.close();
  });
});
