/**
 * Flow-control numbers shared by both ends. A receiver grants credit in bytes; a sender
 * never has more than the granted credit in flight, so neither side holds more than
 * STREAM_WINDOW bytes of a file in memory whatever the link's speed.
 */
export const STREAM_CHUNK_BYTES = 512 * 1024;
export const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
/** Largest WebSocket message either side accepts (a data frame is one chunk plus a header). */
export const MAX_FRAME_BYTES = STREAM_CHUNK_BYTES + 64 * 1024;

/** Heartbeats: each side pings every HEARTBEAT_INTERVAL_MS and closes a link silent for HEARTBEAT_TIMEOUT_MS. */
export const HEARTBEAT_INTERVAL_MS = 15_000;
export const HEARTBEAT_TIMEOUT_MS = 45_000;
