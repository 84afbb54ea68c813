/**
 * Flow-control numbers shared by both ends. A receiver grants credit in bytes; a sender
 * never has more than the granted credit in flight, so neither side holds more than a
 * stream's window of a file in memory whatever the link's speed.
 *
 * A stream starts with STREAM_WINDOW_BYTES. A receiver whose window was not fixed by its
 * caller then follows the link's bandwidth-delay product, which it measures itself
 * (streams.ts, `WindowTuner`), up to LINK_WINDOW_CAP_BYTES for all streams of one link:
 * more only by granting more credit, so the wire and the peer's code stay the same.
 */
export const STREAM_CHUNK_BYTES = 512 * 1024;
export const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
/**
 * What a pushed stream (`stream.push`) may send before the agent's first credit: the agent
 * holds it in memory until an operation adopts the stream (it grants its own window then).
 */
export const PUSH_CREDIT_BYTES = STREAM_WINDOW_BYTES;
/** Pushed streams an agent holds unadopted at once per link; more are declined at once. */
export const MAX_PENDING_PUSHES = 8;
/** A pushed stream nothing adopted within this long is declined (its bytes freed). */
export const PUSH_ADOPT_TIMEOUT_MS = 60_000;
/** The most one link's adaptive stream windows may add up to (the memory cap per link). */
export const LINK_WINDOW_CAP_BYTES = 32 * 1024 * 1024;
/** Largest WebSocket message either side accepts (a data frame is one chunk plus a header). */
export const MAX_FRAME_BYTES = STREAM_CHUNK_BYTES + 64 * 1024;
/** A receiver writes the frames that arrived while its last write ran in one write of at most this many bytes. */
export const MAX_WRITE_BATCH_BYTES = 4 * 1024 * 1024;
/** Frame buffers a sender of a file keeps per stream (the most it has in the socket's queue). */
export const SENDER_FRAME_POOL = 8;

/** Heartbeats: each side pings every HEARTBEAT_INTERVAL_MS and closes a link silent for HEARTBEAT_TIMEOUT_MS. */
export const HEARTBEAT_INTERVAL_MS = 15_000;
export const HEARTBEAT_TIMEOUT_MS = 45_000;

/** Terminal bytes in one `term.data` (before base64). */
export const TERMINAL_CHUNK_BYTES = 16 * 1024;
/** Terminal output a sender may have unacknowledged (`term.open.window`), and input likewise. */
export const TERMINAL_WINDOW_BYTES = 256 * 1024;
