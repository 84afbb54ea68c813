import type { BoardLinks } from '../agent-link/board-links.ts';
import type { BoardLink, RelayMessage } from '../agent-link/board-link.ts';
import type { AgentHub } from '../agent-link/hub.ts';
import type { Db } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { BoardCalls } from '../replicas/board-calls.ts';
import { CameraRelay, DEFAULT_CAMERA_RELAY_OPTIONS, type CameraRelayOptions } from './camera-relay.ts';
import { ProxyRelay } from './proxy-relay.ts';
import { CAMERA_WANT_STALE_MS, RemoteCameras } from './remote-cameras.ts';
import { RemoteScriptProxy } from './remote-proxy.ts';
import { RemoteStreams } from './remote-streams.ts';
import { DEFAULT_STREAM_RELAY_OPTIONS, StreamRelay, type StreamRelayOptions } from './stream-relay.ts';

/** The relay's messages from agents (the catalog's A→S `http.*` and `sse.*`). */
const RELAY_MESSAGE_TYPES = ['http.response', 'http.error', 'sse.event', 'sse.status'] as const;

/**
 * The device-script relay of one server: the proxy (`…/proxy/<path>`) and the event-stream
 * relay (`…/stream/`), both carried by the boards' agent links. It claims its message
 * types and the `http.request_body` source on the hub when it is built.
 */
export class DeviceRelay {
  readonly proxy: ProxyRelay;
  readonly streams: StreamRelay;
  /** The webcam script's MJPEG stream (`…/camera/`), one upstream per board and script. */
  readonly camera: CameraRelay;
  /** The proxy for boards linked to another replica (through board_calls). */
  readonly remoteProxy: RemoteScriptProxy;
  /** Script streams of boards linked to other replicas, and of boards here for them (several replicas only). */
  readonly remoteStreams: RemoteStreams | undefined;
  /** Cameras of boards linked to other replicas, and of boards here for them (several replicas only). */
  readonly remoteCameras: RemoteCameras | undefined;

  constructor(
    deps: { hub: AgentHub; links: BoardLinks; bus: EventBus; calls: BoardCalls; db: Db; log: Logger; shared: boolean },
    streamOptions: StreamRelayOptions = DEFAULT_STREAM_RELAY_OPTIONS,
    cameraOptions: CameraRelayOptions = DEFAULT_CAMERA_RELAY_OPTIONS,
  ) {
    const { hub, links, bus } = deps;
    this.proxy = new ProxyRelay(streamOptions.clock);
    this.streams = new StreamRelay(links, streamOptions);
    this.camera = new CameraRelay(links, this.proxy, cameraOptions);
    this.remoteProxy = new RemoteScriptProxy(deps.calls, links, this.proxy);
    if (deps.shared) {
      this.remoteStreams = new RemoteStreams({
        db: deps.db,
        bus,
        replicaId: links.replicaId,
        log: deps.log,
        relay: this.streams,
        isLocal: (boardId) => links.isLocal(boardId),
        holderElsewhere: (boardId) => links.holderElsewhere(boardId),
        clock: streamOptions.clock,
      });
      this.streams.useSharing(this.remoteStreams);
      this.remoteStreams.start();
      this.remoteCameras = new RemoteCameras({
        db: deps.db,
        bus,
        replicaId: links.replicaId,
        log: deps.log,
        isLocal: (boardId) => links.isLocal(boardId),
        onWant: (target, replicaId, wanted) => this.camera.remoteWant(target, replicaId, wanted, CAMERA_WANT_STALE_MS),
        timeoutMs: cameraOptions.timeoutMs,
        clock: cameraOptions.clock,
      });
      this.camera.useSharing(this.remoteCameras);
    }
    hub.handleMessages(RELAY_MESSAGE_TYPES, (conn, m) => this.onMessage(conn, m));
    // The agent pulls a relayed request's body from us.
    hub.registerSource('http.request_body', async (conn, pull) => this.proxy.openRequestBody(conn, pull));
    // A board that says hello again gets its streams' subscriptions back.
    bus.subscribe('board.status', undefined, ({ boardId, status }) => {
      if (status === 'online') this.streams.boardOnline(boardId);
    });
  }

  onMessage(conn: BoardLink, m: RelayMessage): void {
    switch (m.type) {
      case 'http.response':
      case 'http.error':
        return this.proxy.onHead(conn, m);
      case 'sse.event':
        return this.streams.onEvent(conn, m);
      case 'sse.status':
        return this.streams.onStatus(conn, m);
    }
  }

  close(): void {
    this.remoteCameras?.close();
    this.camera.close();
    this.streams.close();
    this.proxy.close();
  }

  /** Shutdown, after the links closed: this replica's wants go. */
  async stop(): Promise<void> {
    await this.remoteStreams?.stop();
  }
}
