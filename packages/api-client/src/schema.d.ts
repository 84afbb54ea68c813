// Generated from the server's OpenAPI document by `pnpm --filter @mm/api-client gen:api`.
// Do not edit: a test fails when this file differs from a fresh generation.

export interface paths {
    "/api/health/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Service health (no auth) */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/docs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A page to read and try the API (swagger-ui) */
        get: operations["getDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agent/asyncapi/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent link (WebSocket) as an AsyncAPI 3.0 document, generated from the message catalog */
        get: operations["getAgentAsyncapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/metrics/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics (text exposition format)
         * @description HTTP requests by route pattern and status with durations (`mm_http_request_duration_seconds`), ended operations by kind and status (`mm_operations_total`), boards online (`mm_boards_online`), bytes moved over agent links (`mm_agent_link_bytes_total`), SSE clients (`mm_sse_clients`), event-loop delay (`nodejs_eventloop_lag_*`) and the process metrics. Needs a token when auth is on.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List invocations, newest first, each with its latest run */
        get: operations["getInvocations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/create/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create an invocation */
        post: operations["postInvocationsCreate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An invocation with its latest operations */
        get: operations["getInvocationsId"];
        put?: never;
        post?: never;
        /** Delete an invocation (cancels its operations; removes its files) */
        delete: operations["deleteInvocationsId"];
        options?: never;
        head?: never;
        /** Change an invocation's name, description or required app */
        patch: operations["patchInvocationsId"];
        trace?: never;
    };
    "/api/invocations/{id}/upload/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Upload one of the four input files (streamed; replaces that kind) */
        post: operations["postInvocationsIdUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/files/{kind}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Download one of the invocation's files */
        get: operations["getInvocationsIdFilesKind"];
        /** Attach content the server already holds, by its sha256 (nothing is sent) */
        put: operations["putInvocationsIdFilesKind"];
        post?: never;
        /** Remove one of the invocation's files */
        delete: operations["deleteInvocationsIdFilesKind"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/video/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The invocation's output video */
        get: operations["getInvocationsIdVideo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/download/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The invocation as a ZIP: `<kind>/<filename>` entries and `invocation.json` */
        get: operations["getInvocationsIdDownload"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/uploads/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * tus creation: start a resumable upload of one input file
         * @description `Upload-Metadata` (base64 values): `invocation_id`, `file_type` (parameter, bitstream, weights, input_video), `filename`, and optionally `sha256` (checked when the last byte arrives: `checksum_mismatch`, nothing attached). Without `invocation_id` and `file_type` (only `filename` and `sha256`, then required) the content is stored by its sha256 and attached to nothing: a `pac_install` rollout names it as `params.archive_sha256`; content no rollout or invocation names is swept after an hour. An upload untouched for MM_UPLOAD_EXPIRY_S is removed with its bytes (`Upload-Expires`). A zero-length upload is attached at once.
         */
        post: operations["postUploads"];
        delete?: never;
        /** tus: what this server supports */
        options: operations["optionsUploads"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/uploads/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The upload's state as JSON (and the HEAD headers) */
        get: operations["getUploadsId"];
        put?: never;
        /** tus: PATCH or DELETE for clients that can only send POST (X-HTTP-Method-Override) */
        post: operations["postUploadsId"];
        /** tus termination: give up the upload and its bytes */
        delete: operations["deleteUploadsId"];
        /** tus: what this server supports, asked on an upload URL */
        options: operations["optionsUploadsId"];
        /** tus: the upload's offset (where to continue) */
        head: operations["headUploadsId"];
        /**
         * tus: append bytes at Upload-Offset
         * @description The body (`application/offset+octet-stream`) is written at `Upload-Offset`, which must be the upload's offset. Bytes that arrive before a connection breaks are kept. The request that carries the last byte attaches the file (as `POST …/upload/` does) and answers 204 with `Upload-Offset` = Upload-Length; a declared sha256 that does not match answers 400 `checksum_mismatch` and removes the upload.
         */
        patch: operations["patchUploadsId"];
        trace?: never;
    };
    "/api/videos/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Output videos of invocations and videos of the results folder, newest first */
        get: operations["getVideos"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/videos/results/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A video of the results folder (`Range` honoured); `path` may span subfolders */
        get: operations["getVideosResultsPath"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the device-script catalogue
         * @description Ordered by name. `total` counts every match of the filter.
         */
        get: operations["getDeviceScripts"];
        put?: never;
        /**
         * Add a device script to the catalogue
         * @description The server sets `id` and `updated_at`; `description` may be left out (""). Unknown fields are refused.
         */
        post: operations["postDeviceScripts"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One device script */
        get: operations["getDeviceScriptsId"];
        /**
         * Replace a device script
         * @description Every field is required; `updated_at` moves forward.
         */
        put: operations["putDeviceScriptsId"];
        post?: never;
        /** Remove a device script from the catalogue */
        delete: operations["deleteDeviceScriptsId"];
        options?: never;
        head?: never;
        /**
         * Change some fields of a device script
         * @description Sets the fields given; `updated_at` moves forward. An empty object changes nothing (and leaves `updated_at`).
         */
        patch: operations["patchDeviceScriptsId"];
        trace?: never;
    };
    "/api/device-scripts/{id}/proxy/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Relay a request to the device script's own route on the board
         * @description Any method. The request goes through the board's agent to `127.0.0.1:<port>/<path>` on the board, where `port` is the catalogue entry's: method, query (without `board_id`) and end-to-end headers (hop-by-hop ones, `Host` and `Authorization` removed); bodies are streamed both ways. The answer is the script's own: status, headers, body. The board must answer within MM_RELAY_TIMEOUT_S seconds.
         */
        get: operations["getDeviceScriptsIdProxyPath"];
        /**
         * Relay a request to the device script's own route on the board
         * @description Any method. The request goes through the board's agent to `127.0.0.1:<port>/<path>` on the board, where `port` is the catalogue entry's: method, query (without `board_id`) and end-to-end headers (hop-by-hop ones, `Host` and `Authorization` removed); bodies are streamed both ways. The answer is the script's own: status, headers, body. The board must answer within MM_RELAY_TIMEOUT_S seconds.
         */
        put: operations["putDeviceScriptsIdProxyPath"];
        /**
         * Relay a request to the device script's own route on the board
         * @description Any method. The request goes through the board's agent to `127.0.0.1:<port>/<path>` on the board, where `port` is the catalogue entry's: method, query (without `board_id`) and end-to-end headers (hop-by-hop ones, `Host` and `Authorization` removed); bodies are streamed both ways. The answer is the script's own: status, headers, body. The board must answer within MM_RELAY_TIMEOUT_S seconds.
         */
        post: operations["postDeviceScriptsIdProxyPath"];
        /**
         * Relay a request to the device script's own route on the board
         * @description Any method. The request goes through the board's agent to `127.0.0.1:<port>/<path>` on the board, where `port` is the catalogue entry's: method, query (without `board_id`) and end-to-end headers (hop-by-hop ones, `Host` and `Authorization` removed); bodies are streamed both ways. The answer is the script's own: status, headers, body. The board must answer within MM_RELAY_TIMEOUT_S seconds.
         */
        delete: operations["deleteDeviceScriptsIdProxyPath"];
        options?: never;
        head?: never;
        /**
         * Relay a request to the device script's own route on the board
         * @description Any method. The request goes through the board's agent to `127.0.0.1:<port>/<path>` on the board, where `port` is the catalogue entry's: method, query (without `board_id`) and end-to-end headers (hop-by-hop ones, `Host` and `Authorization` removed); bodies are streamed both ways. The answer is the script's own: status, headers, body. The board must answer within MM_RELAY_TIMEOUT_S seconds.
         */
        patch: operations["patchDeviceScriptsIdProxyPath"];
        trace?: never;
    };
    "/api/device-scripts/{id}/stream/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The script's event stream, relayed live (server-sent events)
         * @description The script's `GET /stream` events (id, event name, data as it sent them) to any number of clients from one upstream subscription per board and script, opened with the first client and closed shortly after the last one leaves. Heartbeat comments every 15 s while idle. `Last-Event-ID` (or `?last_event_id=`) replays the events missed since then from the last 256 (at most 1 MiB), after an `event: gap` (`{"last_event_id","message"}`) when some of them are no longer held. A client that stops reading is cut (its connection reset) once 1 MiB waits for it for 2 s, or 2 MiB. An `upstream` event (`{"state":"down"}` / `{"state":"up"}`) tells when the script's stream drops and when it is back (link drop, agent reconnect, script restart); a client joining gets the current state.
         */
        get: operations["getDeviceScriptsIdStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/camera/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The webcam script's camera, relayed live (MJPEG)
         * @description The script's `GET /stream.mjpg` (`multipart/x-mixed-replace; boundary=mmframe`, one whole JPEG a part with `Content-Length` and, when the script sends it, `X-Capture-Time` in ms since the epoch) to any number of viewers from one upstream request per board and script, opened with the first viewer and closed MM_CAMERA_LINGER_MS after the last one leaves. A viewer that reads slower than the camera gets the newest whole frame each time it is ready and skips the rest: no delay builds up and the server holds no queue for it. `<img src>` shows it in a browser. The board must be linked to the replica answering. At most MM_CAMERA_MAX_VIEWERS viewers per camera and MM_CAMERA_MAX_VIEWERS_PER_USER per user on a replica; a viewer so far behind that the frames it still holds pass MM_CAMERA_MAX_PENDING_BYTES (all viewers together) has its connection reset.
         */
        get: operations["getDeviceScriptsIdCamera"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/file/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The program of the entry's current version (or `?version=`) */
        get: operations["getDeviceScriptsIdFile"];
        /** Set the program of the entry's current version: a multipart `file`, or `{ sha256 }` of content the server holds */
        put: operations["putDeviceScriptsIdFile"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/programs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every version that has a program, and the boards the script is deployed on (version and state each) */
        get: operations["getDeviceScriptsIdPrograms"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/deploy/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Deploy the entry's current program to a board: written under its MM_SCRIPTS_ROOT, run supervised, health-checked on its port */
        post: operations["postDeviceScriptsIdDeploy"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/start/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start the script deployed on a board (operation `script_start`) */
        post: operations["postDeviceScriptsIdStart"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/stop/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop the script deployed on a board (operation `script_stop`) */
        post: operations["postDeviceScriptsIdStop"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/restart/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Restart the script deployed on a board (operation `script_restart`) */
        post: operations["postDeviceScriptsIdRestart"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-scripts/{id}/logs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The script's recent output on a board (a bounded buffer the agent keeps) */
        get: operations["getDeviceScriptsIdLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/scripts/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The device scripts deployed on the board and their states, as its agent last reported them */
        get: operations["getBoardsIdScripts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/labels/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set and remove labels on many boards at once (by ids or by a selector)
         * @description Removes the `remove` keys and sets the `set` pairs on every board named in `board_ids` (unknown ids are skipped) or matched by `board_selector`, in one transaction. The agent's `mm/` labels cannot be set or removed. A board that would end with more than 32 labels makes it a 400 and nothing changes.
         */
        post: operations["postBoardsLabels"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List boards with their presence */
        get: operations["getBoards"];
        put?: never;
        /** Register a board; answers its agent token once */
        post: operations["postBoards"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A board */
        get: operations["getBoardsId"];
        put?: never;
        post?: never;
        /** Delete a board: cancels its operations, revokes its token, disconnects its agent */
        delete: operations["deleteBoardsId"];
        options?: never;
        head?: never;
        /** Rename a board, set its labels (the agent's mm/ labels stay), put it in or out of maintenance, set its power controller */
        patch: operations["patchBoardsId"];
        trace?: never;
    };
    "/api/boards/{id}/health-check/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run the board's health checks now
         * @description Queues a run of every health check whose selector the board matches, ahead of its other waiting work. Answers 202 with the first run (the `Location` header names it); `runs` lists them all.
         */
        post: operations["postBoardsIdHealthCheck"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/power/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Switch a board's power through its lab host and pdudaemon
         * @description Starts operation `power_on`, `power_off` or `power_cycle` at once (it does not wait for the board, which may be off or hung); its lab host relays the command to pdudaemon (docs/power.md). Answers like every operation-creating POST (`Prefer: respond-async` → 202; otherwise waits). The operation fails `power_controller_offline` when the lab host is not linked, `pdu_error` with pdudaemon's answer when the command failed.
         */
        post: operations["postBoardsIdPower"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/incidents/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A board's incidents: hangs, their recovery and time to recover */
        get: operations["getBoardsIdIncidents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/telemetry/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A board's telemetry over the last 24 h, one sample a minute */
        get: operations["getBoardsIdTelemetry"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/health-checks/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List health checks */
        get: operations["getHealthChecks"];
        put?: never;
        /** Define a health check: an invocation run on every matching board every interval_s */
        post: operations["postHealthChecks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/health-checks/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A health check */
        get: operations["getHealthChecksId"];
        put?: never;
        post?: never;
        /** Delete a health check (its past runs stay, as ordinary operations) */
        delete: operations["deleteHealthChecksId"];
        options?: never;
        head?: never;
        /** Change a health check */
        patch: operations["patchHealthChecksId"];
        trace?: never;
    };
    "/api/health-checks/{id}/run/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a health check now
         * @description Queues a run of the check on every online board its selector matches, ahead of their other waiting work.
         */
        post: operations["postHealthChecksIdRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List operations, newest first */
        get: operations["getOperations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An operation */
        get: operations["getOperationsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{id}/log/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The operation's whole log so far */
        get: operations["getOperationsIdLog"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{id}/cancel/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel an operation
         * @description A queued operation is cancelled at once. A running one is told to stop; it becomes `cancelled` when the board confirms (poll it or follow its events).
         */
        post: operations["postOperationsIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{id}/events/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The operation's events (server-sent events)
         * @description Every stored event from the start — `status`, `progress`, `log` — each with `id:` = its sequence number, then live ones, then `end` (data: the final operation) and the stream closes. `Last-Event-ID` resumes after that event. An operation that already ended replays and ends at once. Comment lines are sent while idle. The stream starts with `retry:` (the reconnect delay). Every event has an `id:` (a live progress report between stored events carries the id of the last stored one). Resuming with the `Last-Event-ID` of `end` (or any id past it) answers 204: an EventSource stops.
         */
        get: operations["getOperationsIdEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/transfer/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Copy the invocation's files to the board
         * @description Starts a `transfer` operation: the board receives every input file it does not already hold (same sha256), resuming partial files, and keeps them under `$MM_AGENT_DIR/invocations/<id>/`. Waits for the end unless `Prefer: respond-async`.
         */
        post: operations["postInvocationsIdTransfer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/execute/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run the invocation on the board
         * @description Starts an `execute` operation: transfers what the board lacks, runs the runner, and stores the output video as the invocation's `output_video`. No body needed. Waits for the end unless `Prefer: respond-async`. With `board_selector` the operation waits (queued, `board_id` null) until the fleet scheduler picks a matching board (docs/fleet.md).
         */
        post: operations["postInvocationsIdExecute"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/metrics/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One metric across the invocation's runs
         * @description `result.metrics[name]` of each succeeded execute of the invocation that has it, oldest first (by `finished_at`): the latest 1000 runs at most. A run that counted several repeats also gives `summary`, its `result.summary[name]`. Runs without that metric are left out, and so are health-check runs unless `?health_checks=1`.
         */
        get: operations["getInvocationsIdMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invocations/{id}/results/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A run's per-frame results (results.jsonl)
         * @description What mm-runner wrote for each frame (docs/runner.md): one JSON object a line, `{ frame, t_ms, classes?, boxes? }`. The latest run of the invocation that has results, or the one `operation_id` names. `Range` is honoured.
         */
        get: operations["getInvocationsIdResults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/pacs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The board's last known PACs, without asking the board
         * @description Every `pac_query` (and `pac_install`, and the check after `pac_activate`) stores the list it got; this answers it with its age, whether it is `stale` (and why), and a `pac_query` already under way. Nothing is queued: refresh with `POST /api/pacs/query/` when it is stale or on request.
         */
        get: operations["getBoardsIdPacs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/pacs/query/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * List the board's PACs (xlnx-config -q)
         * @description Runs as an operation of kind `pac_query`, so it waits for the board's earlier work (a reboot above all). Waits for the end and answers the query itself; with `Prefer: respond-async` answers 202 with the operation, whose `result` is the same `{ board_id, pacs, active }`. The answer's `active` is stored as the board's `active_pac`. A query asked while another of the same board still waits last in its queue joins it: the same operation answers both.
         */
        post: operations["postPacsQuery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/pacs/activate/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Activate a PAC and reboot the board into it (verified)
         * @description The PAC must be one the board lists (checked against a fresh `xlnx-config -q` before anything runs): otherwise 400 `pac_not_found` and the board is left untouched. Then an operation of kind `pac_activate`: `xlnx-config -a <pac>`, the board goes `rebooting` (its other operations wait) and reboots; the operation succeeds once the board has reconnected with a new boot id and reports the PAC active. It fails with `error.code` `xlnx_config_failed` (the output is in its log and message), `reboot_failed`, `reboot_timeout` (not back within MM_REBOOT_TIMEOUT_S), `reboot_not_observed` (back with the same boot id) or `pac_not_active` (back with another PAC active).
         */
        post: operations["postPacsActivate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/pacs/install/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Install a PAC from a .tar or .tar.gz archive of one PAC folder
         * @description The upload is streamed to disk (never held in memory; at most MM_MAX_UPLOAD_BYTES), then an operation of kind `pac_install` lets the board pull it and extract it into `MM_PAC_DIR/<folder>` (refusing absolute paths, `..`, links, devices and fifos, several top-level folders, a missing manifest.yaml, and anything not tar/gzip, with nothing written) and list its PACs again. The server removes its copy of the archive once the operation ends.
         */
        post: operations["postPacsInstall"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/apps/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A board's accelerated applications, the active one and its DPU
         * @description As the board last reported them (at its hello and after every app or PAC change). With `?refresh=1` the board is asked now: an operation of kind `app_query` (it waits for the board's earlier work), answered like the PAC routes (the result itself when it ends in time, else 202 with the operation).
         */
        get: operations["getBoardsIdApps"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/apps/load/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Load an accelerated application (no reboot), verified
         * @description The app must be one the board lists (checked before anything runs): otherwise 400 `app_not_found`. Then an operation of kind `app_load`: the board unloads what holds the slot, loads the app (`dfx-mgr-client -load`, or `xmutil loadapp`) and verifies it by the listing (the app in an active slot), by `xdputil query` (the DPU answers, where xdputil exists) and by /etc/vart.conf, never by exit statuses. It fails with `error.code` `no_empty_slot`, `app_load_failed` or `app_load_timeout` (a load still running after the agent's MM_APP_LOAD_TIMEOUT_S is killed), the tools' output in its log and message.
         */
        post: operations["postAppsLoad"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/apps/unload/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Unload the active accelerated application
         * @description An operation of kind `app_unload`, verified by the listing afterwards (`app_unload_failed` when the app still holds its slot).
         */
        post: operations["postAppsUnload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/apps/install/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Install an accelerated application from a .tar, .tar.gz or .zip of one app folder
         * @description The upload is streamed to disk (at most MM_MAX_UPLOAD_BYTES), then an operation of kind `app_install` lets the board pull it, check it as strictly as a PAC archive (no absolute paths, `..`, links, devices or fifos, one top-level folder holding shell.json with a `shell_type` dfx-mgrd knows, a `*.bit.bin`/`*.bin` bitstream and a `*.dtbo` overlay, optionally accel.json; size limits) and install it atomically under MM_APPS_DIR/<folder>. A refused archive: 400 `invalid_app_archive` with the reason, nothing written. The server removes its copy once the operation ends.
         */
        post: operations["postAppsInstall"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agent/connect/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The board agent's link (WebSocket upgrade)
         * @description Authenticated with the board token (`Authorization: Bearer <board token>`), not the API token. See docs/agent-link.md.
         */
        get: operations["getAgentConnect"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agent/enroll/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An agent exchanges a provisioning key for a board token
         * @description No user auth: the provisioning key in the body is the credential. See docs/enrollment.md.
         */
        post: operations["postAgentEnroll"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/approve/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Approve a pending board (enrolled with a manual key), or its held re-enrolment: its agent gets a token at its next try */
        post: operations["postBoardsIdApprove"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/provisioning-keys/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Provisioning keys (never the keys themselves) */
        get: operations["getProvisioningKeys"];
        put?: never;
        /** Make a provisioning key boards enroll with; answers it once */
        post: operations["postProvisioningKeys"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/provisioning-keys/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a provisioning key: no board can enroll with it any more (enrolled boards stay) */
        delete: operations["deleteProvisioningKeysId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/downloads/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What the control plane serves for boards and people: agent packages, install-agent.sh, mm (no sign-in) */
        get: operations["getDownloads"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/downloads/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One served file (no sign-in); `SHA256SUMS` lists every file with its sha256 */
        get: operations["getDownloadsFile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/agent-update/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Update the board's agent: after its running operation, installed beside, switched, rolled back by the board itself if it does not come up */
        post: operations["postBoardsIdAgentUpdate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List rollouts, newest first */
        get: operations["getRollouts"];
        put?: never;
        /**
         * Apply one operation kind to every board a selector matches, in phases, with an automatic abort
         * @description The matching boards are fixed now. Each board's step is an ordinary operation named to that board. Without `batch_size` every board starts at once; with it, in phases of that size, the next when the previous has ended and `batch_interval_s` passed. With `abort`, once `min_finished` boards have finished and the failed share reaches `failure_percent`, the rollout is `aborted`: boards not started are `skipped`, running ones finish. `execute` needs the operator role, the other kinds admin.
         */
        post: operations["postRollouts"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A rollout: its status, counts and every board with its step */
        get: operations["getRolloutsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/{id}/pause/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pause: the next phase waits (steps already started go on) */
        post: operations["postRolloutsIdPause"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/{id}/resume/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume a paused rollout */
        post: operations["postRolloutsIdResume"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/{id}/cancel/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel: boards not started are skipped, queued steps cancelled; running ones finish */
        post: operations["postRolloutsIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/{id}/boards/{board_id}/output/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One board's output video of an execute rollout (Range honoured) */
        get: operations["getRolloutsIdBoardsBoardIdOutput"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rollouts/{id}/events/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The rollout's events (server-sent events)
         * @description First a `status` event with the whole rollout; then `board` (one board's step changed: the board and `counts`), `status` (the rollout's status changed: the whole rollout) and, once it has finished, `end` (the final rollout) and the stream closes. A reconnecting client starts again from the whole rollout.
         */
        get: operations["getRolloutsIdEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/reservations/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List reservations, newest first */
        get: operations["getReservations"];
        put?: never;
        /**
         * Reserve a board (named, or any idle board matching a selector) for a while
         * @description Exactly one of `board_id` and `board_selector`. `duration_s` is at most `MM_RESERVATION_MAX_S` (default 8 h). When the board is free (a named board nobody holds; for a selector, an idle, linked, healthy board nobody holds) the lease starts now: 201. Otherwise the request waits its turn, first come first served per board or selector: 202 with `position` and `estimated_start_at`; it ends `wait_timeout` after `wait_s` (default 3600). A lease ends by itself at `ends_at`. While it holds, the board takes no selector or rollout work but its holder's, and others' work naming it waits.
         */
        post: operations["postReservations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/reservations/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A reservation (a waiting one with its position and estimate) */
        get: operations["getReservationsId"];
        put?: never;
        post?: never;
        /** Release a lease, or withdraw a waiting request (holder or admin; an admin ending another's lease is audited) */
        delete: operations["deleteReservationsId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/reservations/{id}/renew/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Renew a lease: it now ends `duration_s` from now (holder or admin) */
        post: operations["postReservationsIdRenew"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/baselines/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List baselines */
        get: operations["getBaselines"];
        put?: never;
        /**
         * Save the runs of some operations as a named baseline
         * @description The counted runs (`result.runs`) of each operation, their summary per board and their contexts are copied into the baseline (docs/results.md).
         */
        post: operations["postBaselines"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/baselines/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A baseline (by id or name) */
        get: operations["getBaselinesId"];
        put?: never;
        post?: never;
        /** Delete a baseline (by id or name); its operations stay */
        delete: operations["deleteBaselinesId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/comparisons/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Put new runs beside a baseline: per metric and board, the change with its interval and a verdict
         * @description Verdicts per metric and board: `regressed`, `improved`, `unchanged` or `inconclusive` against the threshold (docs/results.md). The overall verdict is `regressed` when a metric regressed on at least two boards (or on the only board). A regression also tells `regression.detected` to the webhooks.
         */
        post: operations["postComparisons"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Webhook subscriptions (never their secrets) */
        get: operations["getWebhooks"];
        put?: never;
        /** Subscribe a URL to events; answers the signing secret once */
        post: operations["postWebhooks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A webhook subscription */
        get: operations["getWebhooksId"];
        put?: never;
        post?: never;
        /** Delete a subscription (and its delivery log) */
        delete: operations["deleteWebhooksId"];
        options?: never;
        head?: never;
        /** Change a subscription: its URL, events, format, or turn it on or off */
        patch: operations["patchWebhooksId"];
        trace?: never;
    };
    "/api/webhooks/{id}/deliveries/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A subscription's delivery log, newest first */
        get: operations["getWebhooksIdDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{id}/deliveries/{delivery_id}/redeliver/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a delivery again, now (with a fresh retry window); the same webhook-id */
        post: operations["postWebhooksIdDeliveriesDeliveryIdRedeliver"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/boards/{id}/terminal/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A terminal on the board (WebSocket upgrade)
         * @description A login shell on the board as its MM_TERMINAL_USER, in a pseudo-terminal. Binary frames are the terminal’s bytes both ways; the client sends text frames `{"type":"resize","cols":N,"rows":N}`, the server a last text frame `{"type":"exit","code":N|null,"reason","message"}` before it closes the socket. For an operator holding the board’s reservation, or an admin. Every session is audited and recorded (see /api/terminal-sessions/).
         */
        get: operations["getBoardsIdTerminal"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/terminal-sessions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Terminal sessions, newest first (admins) */
        get: operations["getTerminalSessions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/terminal-sessions/{id}/recording/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A session's recording (asciicast v2, admins)
         * @description Newline-delimited JSON: a header, then `[seconds, "o", text]` per piece of output and `[seconds, "r", "COLSxROWS"]` per resize. Keystrokes are not recorded; what the shell echoed is. Written when the session ends (404 `recording_not_ready` while it runs).
         */
        get: operations["getTerminalSessionsIdRecording"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/login/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign in: sets the session cookie mm_session
         * @description Sets `mm_session` (HttpOnly, SameSite=Lax, Path=/, Secure when the request came over https — directly, through a trusted proxy saying `X-Forwarded-Proto: https` (MM_TRUST_PROXY=1), or when MM_PUBLIC_URL is https). The session ends after MM_SESSION_IDLE_S without requests or MM_SESSION_MAX_S after sign-in. Failed sign-ins are limited per username and per address (429 with Retry-After). An unknown user and a wrong password get the same 401.
         */
        post: operations["postAuthLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/token-login/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign in with a token: sets the session cookie mm_session
         * @description For the dashboard's "sign in with a token": a personal token or MM_API_TOKEN is exchanged for a session cookie, so that plain links (videos, ZIPs, logs) work in the browser without the token ever being kept by the page. The session acts as the token does and ends with it: revoking a personal token, its expiry or a changed MM_API_TOKEN ends the session too. Same cookie, limits and 401/429 answers as `POST /api/auth/login/`.
         */
        post: operations["postAuthTokenLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/logout/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sign out: ends the session server-side and clears the cookie */
        post: operations["postAuthLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/password/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Change your own password
         * @description Any signed-in user, for their own password: the current one must be given. Your other sessions end (their open streams are cut); the one making the request stays signed in; personal tokens keep working. A wrong current password counts as a failed sign-in (the same limits, 429 with Retry-After).
         */
        post: operations["postAuthPassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/me/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Who the request acts as */
        get: operations["getAuthMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users (admin) */
        get: operations["getUsers"];
        put?: never;
        /** Create a user (admin) */
        post: operations["postUsers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user (admin) */
        get: operations["getUsersId"];
        put?: never;
        post?: never;
        /** Delete a user (admin): their tokens and sessions stop working at once, open streams are cut */
        delete: operations["deleteUsersId"];
        options?: never;
        head?: never;
        /**
         * Change a user's role or password (admin)
         * @description A new password ends the user's sessions; `revoke_tokens: true` also revokes their personal tokens; a new role cuts their open streams (they reconnect with the new role).
         */
        patch: operations["patchUsersId"];
        trace?: never;
    };
    "/api/tokens/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your personal tokens; an admin may list any user's or everyone's (never the tokens themselves) */
        get: operations["getTokens"];
        put?: never;
        /** Make a personal token; answers it once */
        post: operations["postTokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/tokens/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke one of your tokens (an admin: anyone's): it stops working at once (open streams too) */
        delete: operations["deleteTokensId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit log, newest first (admin)
         * @description Every change: invocations, files, transfers and runs, cancels, boards, PACs, the device-script catalogue and relayed script commands, users, tokens, sign-ins, sign-outs and failed sign-ins. A resumable upload is one entry (`upload.attach`, when its last byte arrives), not one per PATCH; identical consecutive script commands of one user on one target (a servo drag) are one entry with a `count`.
         */
        get: operations["getAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/actions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The actions that occur in the audit log, alphabetically (admin): the choices of the action filter */
        get: operations["getAuditActions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Health: {
            /** @enum {string} */
            status: "ok" | "degraded";
            version: string;
            /** @enum {string} */
            database: "ok" | "unreachable";
            boards_online: number;
            /** @description The largest file an upload may be (MM_MAX_UPLOAD_BYTES): clients refuse larger ones before sending */
            max_upload_bytes: number;
        };
        AsyncApiDocument: {
            [key: string]: unknown;
        };
        InvocationList: {
            invocations: components["schemas"]["InvocationListItem"][];
            total: number;
        };
        InvocationListItem: components["schemas"]["Invocation"] & {
            latest_run: components["schemas"]["Operation"] | null;
        };
        InvocationFiles: {
            parameter: components["schemas"]["FileRecord"];
            bitstream: components["schemas"]["FileRecord"];
            weights: components["schemas"]["FileRecord"];
            input_video: components["schemas"]["FileRecord"];
            output_video: components["schemas"]["FileRecord"];
        };
        FileRecord: {
            /** @enum {string} */
            kind: "parameter" | "bitstream" | "weights" | "input_video" | "output_video";
            filename: string;
            size: number;
            /** @example e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 */
            sha256: string;
            /** @example video/mp4 */
            content_type: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            uploaded_at: string;
            /** @example /api/invocations/1/files/input_video/ */
            url: string;
            model?: components["schemas"]["ModelSummary"];
        } | null;
        /** @description A `.xmodel` weights file: its DPU subgraphs and inputs, as the server read them (docs/accelerators.md) */
        ModelSummary: {
            /** @enum {string} */
            format: "xmodel";
            /** @description The subgraphs that run on the DPU (none: a CPU-only model) */
            dpu_subgraphs: {
                name: string;
                /**
                 * @description The DPU the subgraph was compiled for, as `xdputil query` prints fingerprints
                 * @example 0x101000016010407
                 */
                dpu_fingerprint: string | null;
                /** @example DPUCZDX8G_ISA1_B4096 */
                dpu_name: string | null;
            }[];
            inputs: {
                name: string;
                shape: number[];
                /** @example xint8 */
                dtype: string;
            }[];
        };
        Operation: {
            id: number;
            /** @example execute */
            kind: string;
            /** @enum {string} */
            status: "queued" | "running" | "succeeded" | "failed" | "cancelled";
            board_id: string | null;
            invocation_id: number | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            started_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            finished_at: string | null;
            progress: {
                phase: string;
                bytes_done: number;
                bytes_total: number;
            };
            /**
             * @description What the operation produced, by kind (null until it ends). `transfer` and `execute` report the input files: `{ invocation_dir, files_pulled, files_cached, bytes_pulled, wire_bytes, files: [{ kind, filename, size, cached, bytes_pulled, wire_bytes, pushed? }] }`, where `bytes_pulled` counts file bytes received over the agent link and `wire_bytes` the bytes that crossed it for them (fewer when the link compressed them, docs/compression.md); the server adds what it sent of them: `bytes_sent`, `wire_bytes_sent`, `pulls: [{ filename, sha256, offset, bytes, wire_bytes, complete, pushed? }]`; `pushed: true` marks a file the server sent right behind the operation's start, with no pull (`complete` then means sent whole). `execute` adds `exit_code`, `duration_ms`, `output_video`, and for the output video's way back `output_bytes_received` (file bytes the server received, every attempt) and `output_wire_bytes` (the bytes on the wire for them).
             * @example {
             *       "invocation_dir": "/var/lib/mm-agent/invocations/7",
             *       "files_pulled": 1,
             *       "files_cached": 0,
             *       "bytes_pulled": 20971520,
             *       "wire_bytes": 402211,
             *       "files": [
             *         {
             *           "kind": "parameter",
             *           "filename": "design.bit",
             *           "size": 20971520,
             *           "cached": false,
             *           "bytes_pulled": 20971520,
             *           "wire_bytes": 402211,
             *           "pushed": true
             *         }
             *       ],
             *       "bytes_sent": 20971520,
             *       "wire_bytes_sent": 402211,
             *       "pulls": [
             *         {
             *           "filename": "design.bit",
             *           "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
             *           "offset": 0,
             *           "bytes": 20971520,
             *           "wire_bytes": 402211,
             *           "complete": true,
             *           "pushed": true
             *         }
             *       ],
             *       "exit_code": 0,
             *       "duration_ms": 41250,
             *       "output_bytes_received": 67108864,
             *       "output_wire_bytes": 67108864
             *     }
             */
            result?: unknown;
            error: {
                code: string;
                message: string;
            } | null;
            /** @description Who asked for it: a username, `MM_API_TOKEN`, or null when auth was off */
            created_by: string | null;
            /** @description Run on any board whose labels hold these pairs (`board_id` is null until one is picked); null when a board was named */
            board_selector: {
                [key: string]: string;
            } | null;
            /** @description Waiting selector work is taken by priority (−100…100), then age */
            priority: number;
            /** @description The health check this run belongs to; null for other work. Lists leave health-check runs out unless asked (`?health_checks=1`) */
            health_check_id: number | null;
            /**
             * Format: date-time
             * @description Running on a board that went offline: since when (null otherwise). Offline for `MM_BOARD_LOST_S`, it fails `board_lost`; what the board reports later is kept as `result.late_result` and does not change the status.
             * @example 2026-11-21T10:00:00.000Z
             */
            board_offline_since: string | null;
            /** @description Queued selector work: why it waits (boards that match, by what keeps them) and when it gives up; null otherwise */
            waiting: components["schemas"]["Waiting"] | null;
        };
        Waiting: {
            /** @example 3 boards match: 1 offline, 2 in maintenance */
            reason: string;
            /** @description Registered boards whose labels hold the selector */
            matching: number;
            online: number;
            /** @description Online, not in maintenance, not `bad`, not reserved by someone else, running and holding nothing: about to take it */
            idle: number;
            maintenance: number;
            bad: number;
            /** @description Held by a reservation of someone other than the work's `created_by`: the work keeps off them */
            reserved: number;
            /**
             * Format: date-time
             * @description When it fails `queue_timeout` if no board took it
             */
            gives_up_at: string | null;
        };
        Invocation: {
            id: number;
            name: string;
            description: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            updated_at: string;
            files: components["schemas"]["InvocationFiles"];
            /** @description The accelerated application its runs need (PATCH sets it; absent when none): loaded first on a board where it is not active */
            requires_app?: string;
        };
        /**
         * @example {
         *       "name": "yolo-test",
         *       "description": ""
         *     }
         */
        CreateInvocation: {
            name: string;
            description: string;
        };
        InvocationDetails: components["schemas"]["Invocation"] & {
            /** @description Its latest operations, newest first. */
            operations: components["schemas"]["Operation"][];
        };
        /**
         * @example {
         *       "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
         *       "filename": "weights.bin"
         *     }
         */
        AttachByDigest: {
            sha256: string;
            /** @description Stored as a plain base name (folders, NUL and control characters removed, cut to 255 bytes), as every upload name is */
            filename: string;
        };
        Upload: {
            /** Format: uuid */
            id: string;
            /** @description null: content uploaded on its own (stored by sha256, attached to nothing) */
            invocation_id: number | null;
            file_type: ("parameter" | "bitstream" | "weights" | "input_video") | "content";
            filename: string;
            sha256: string | null;
            length: number;
            offset: number;
            /** Format: date-time */
            expires_at: string;
        };
        VideoList: {
            videos: components["schemas"]["Video"][];
            total: number;
        };
        Video: {
            /** @enum {string} */
            source: "invocation" | "results";
            invocation_id: number | null;
            /** @description The invocation's name, or the path inside the results folder. */
            name: string;
            filename: string;
            size: number;
            content_type: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            modified_at: string;
            url: string;
        };
        DeviceScriptList: {
            scripts: components["schemas"]["DeviceScript"][];
            total: number;
        };
        DeviceScript: {
            /**
             * Format: uuid
             * @example 0b6e1c52-4a59-4a27-9b4c-6f1d2d9e8a10
             */
            id: string;
            /** @example GPIO motor and steering servo */
            name: string;
            /** @example gpio */
            device_type: string;
            description: string;
            /** @example mm-gpio-motor.mjs */
            script_filename: string;
            /** @example /opt/model-manager/device-scripts/gpio-motor */
            remote_dir: string;
            /** @example 8765 */
            port: number;
            /** @example 1.0.0 */
            version: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            updated_at: string;
        };
        DeviceScriptCreate: {
            /** @example GPIO motor and steering servo */
            name: string;
            /** @example gpio */
            device_type: string;
            /** @default  */
            description: string;
            /** @example mm-gpio-motor.mjs */
            script_filename: string;
            /** @example /opt/model-manager/device-scripts/gpio-motor */
            remote_dir: string;
            /** @example 8765 */
            port: number;
            /** @example 1.0.0 */
            version: string;
        };
        DeviceScriptReplace: {
            /** @example GPIO motor and steering servo */
            name: string;
            /** @example gpio */
            device_type: string;
            description: string;
            /** @example mm-gpio-motor.mjs */
            script_filename: string;
            /** @example /opt/model-manager/device-scripts/gpio-motor */
            remote_dir: string;
            /** @example 8765 */
            port: number;
            /** @example 1.0.0 */
            version: string;
        };
        DeviceScriptPatch: {
            /** @example GPIO motor and steering servo */
            name?: string;
            /** @example gpio */
            device_type?: string;
            description?: string;
            /** @example mm-gpio-motor.mjs */
            script_filename?: string;
            /** @example /opt/model-manager/device-scripts/gpio-motor */
            remote_dir?: string;
            /** @example 8765 */
            port?: number;
            /** @example 1.0.0 */
            version?: string;
        };
        DeviceScriptProgram: {
            script_id: string;
            version: string;
            filename: string;
            size: number;
            sha256: string;
            uploaded_at: string;
        };
        BoardScript: {
            script_id: string;
            name: string;
            version: string;
            port: number;
            /** @enum {string} */
            state: "running" | "stopped" | "failed";
            since: string;
            restarts: number;
            board_id: string;
            board_name: string;
            reported_at: string;
        };
        /**
         * @example {
         *       "board_id": "5f0c6a1e-8d2b-4a7e-9d51-2b3c4d5e6f70"
         *     }
         */
        ScriptBoardChoice: {
            /**
             * Format: uuid
             * @description The board; may be left out when exactly one is registered
             */
            board_id?: string;
        };
        BulkLabelsResult: {
            boards: components["schemas"]["Board"][];
            changed: number;
        };
        Board: {
            /** Format: uuid */
            id: string;
            name: string;
            /**
             * @description `pending`: enrolled with a manual-approval key, waiting for `POST /api/boards/<id>/approve/`. `unresponsive`: it stopped answering (no heartbeat past MM_HANG_DETECT_S, or a run past its bound that did not answer cancel) and is not back in service yet (docs/power.md).
             * @enum {string}
             */
            status: "online" | "offline" | "rebooting" | "pending" | "unresponsive";
            /** @description The board is running an operation. */
            busy: boolean;
            /** @description When the agent was last heard from (now-ish while online). */
            last_seen_at: string | null;
            /** @description When the current (or last) connection was opened. */
            connected_at: string | null;
            agent_version: string | null;
            hostname: string | null;
            platform: string | null;
            boot_id: string | null;
            active_pac: string | null;
            /** @description `{ key: value }` labels; an enrolled board starts with its provisioning key's. Keys under `mm/` are the agent's, read-only, derived from its facts. */
            labels: {
                [key: string]: string;
            };
            /**
             * @description What the agent found on the board (`arch, os, kernel, board_model, cpu_count, memory_bytes, disk_free_bytes, agent_version, node_version, active_pac`, and more where known), refreshed at every hello and when they change; null before its first hello.
             * @example {
             *       "arch": "arm64",
             *       "os": "Ubuntu 22.04.4 LTS",
             *       "board_model": "Kria KV260 Vision AI Starter Kit",
             *       "cpu_count": 4,
             *       "memory_bytes": 4118261760,
             *       "active_pac": "kv260-bist"
             *     }
             */
            facts: {
                [key: string]: unknown;
            } | null;
            /** @description The latest telemetry sample the agent sent, or null (none yet, or an agent without telemetry). */
            telemetry: components["schemas"]["TelemetrySample"] | null;
            /** @description Under repair: takes no selector work (work naming it still runs) */
            maintenance: boolean;
            /**
             * @description From its health checks: `unknown` until one ran; a `bad` board takes no selector work
             * @enum {string}
             */
            health: "unknown" | "good" | "bad";
            /** @description Why it is `bad` (`fps 3.1 < min 10`) */
            health_reason: string | null;
            health_checked_at: string | null;
            /** @description The operation it runs now */
            current_operation_id: number | null;
            /** @description Operations waiting for it */
            queued: number;
            /** @description When it was registered or enrolled */
            created_at: string;
            /** @description Enrolled boards: the machine id its agent enrolled with (one board per key and machine id); null for a registered board */
            machine_id: string | null;
            /** @description Enrolled boards: the address its enrolment came from */
            enrolled_from: string | null;
            /** @description Enrolled boards: when it enrolled */
            enrolled_at: string | null;
            /** @description Someone enrolled again with its key and machine id without proving it is this board: held until an admin approves it (`POST /api/boards/<id>/approve/`; `approved` then, until the next enroll call takes the new token). The board keeps its token meanwhile. */
            reenroll_request: {
                hostname: string;
                address: string | null;
                requested_at: string;
                approved: boolean;
            } | null;
            /** @description The lease in force on it (docs/reservations.md): who holds it and until when; null when nobody does. Others' selector and rollout work keeps off it meanwhile, and their work naming it waits. */
            reservation: {
                id: number;
                user: string | null;
                ends_at: string;
            } | null;
            /** @description Its power controller (docs/power.md): the lab host relaying to pdudaemon, and the PDU name and port there; null when its power cannot be switched. */
            power: components["schemas"]["BoardPower"] | null;
            /** @description The device scripts it reports (docs/device-scripts.md), by name: `failed` (exited, waiting for its supervisor's next restart) with how many restarts so far */
            scripts: {
                script_id: string;
                name: string;
                /** @enum {string} */
                state: "running" | "stopped" | "failed";
                restarts: number;
                since: string;
            }[];
        };
        /**
         * @example {
         *       "at": "2026-11-27T04:00:00.000Z",
         *       "temperatures_c": {
         *         "ams.ps_temp": 48.2,
         *         "ams.pl_temp": 52.9
         *       },
         *       "power_w": 6.7,
         *       "memory_used_bytes": 812000000,
         *       "load_1m": 0.4,
         *       "disk_free_bytes": 21000000000
         *     }
         */
        TelemetrySample: {
            /** @description When the server received it. */
            at: string;
            /** @description Degrees Celsius by sensor: `<hwmon name>.<label or tempN>`, e.g. `ams.ps_temp`, `ams.pl_temp`; invalid reads are left out. */
            temperatures_c: {
                [key: string]: number;
            };
            /** @description Board power from its `ina260` monitors, where it has any. */
            power_w?: number;
            memory_used_bytes: number;
            load_1m: number;
            /** @description Free space of the file system holding MM_AGENT_DIR. */
            disk_free_bytes: number;
        };
        /**
         * @example {
         *       "controller_board_id": "0b7c1d7e-5f7a-4d7e-9a53-0d1f2e3a4b5c",
         *       "pdu_hostname": "lab-pdu-1",
         *       "pdu_port": 3
         *     }
         */
        BoardPower: {
            /**
             * Format: uuid
             * @description The lab host: a board whose agent has MM_PDUDAEMON_URL and relays the command to that pdudaemon
             */
            controller_board_id: string;
            /** @description The PDU's name in pdudaemon's configuration (its `pdus` key) */
            pdu_hostname: string;
            /** @description The outlet (port) on that PDU */
            pdu_port: number;
        };
        /**
         * @example {
         *       "board_selector": {
         *         "site": "lab-1"
         *       },
         *       "set": {
         *         "rack": "b"
         *       },
         *       "remove": [
         *         "temp"
         *       ]
         *     }
         */
        BulkLabels: {
            /** @description These boards */
            board_ids?: string[];
            /**
             * @description Every board holding these labels (`{}`: every board)
             * @example {
             *       "mm/board-model": "kv260",
             *       "camera": "yes"
             *     }
             */
            board_selector?: {
                [key: string]: string;
            };
            /**
             * @description Labels to set (a key it has already takes the new value)
             * @example {
             *       "site": "lab-2",
             *       "rack": "a"
             *     }
             */
            set?: {
                [key: string]: string;
            };
            /** @description Label keys to remove (a board without one is left as it is) */
            remove?: string[];
        };
        BoardList: {
            boards: components["schemas"]["Board"][];
            total: number;
        };
        /**
         * @example {
         *       "labels": {
         *         "camera": "yes",
         *         "site": "lab-2"
         *       },
         *       "maintenance": false
         *     }
         */
        PatchBoard: {
            name?: string;
            /**
             * @description Replaces the people's labels; the agent's `mm/` ones stay (an `mm/` key here is 400)
             * @example {
             *       "site": "lab-2",
             *       "rack": "a"
             *     }
             */
            labels?: {
                [key: string]: string;
            };
            /** @description Under repair: no selector work goes to it (work naming it still runs) */
            maintenance?: boolean;
            /** @description Its power controller (docs/power.md): the lab host (another board) relaying to pdudaemon, and the PDU name and port there; null removes it */
            power?: components["schemas"]["BoardPower"] | null;
        };
        HealthCheckRuns: components["schemas"]["Operation"] & {
            runs: components["schemas"]["Operation"][];
        };
        NewBoard: components["schemas"]["Board"] & {
            /** @description The board token for the agent (MM_BOARD_TOKEN). Shown this once; only its hash is stored. */
            token: string;
            /** @description The one line that installs the agent on the board with this token (docs/packages.md); it names MM_PUBLIC_URL, else the address the request came to */
            install_command: string;
            /** @description Set when MM_PUBLIC_URL is not: the command names the address the request came to, which a board may not reach */
            install_warning: string | null;
        };
        /**
         * @example {
         *       "name": "zcu104-lab-1"
         *     }
         */
        CreateBoard: {
            name: string;
        };
        /**
         * @example {
         *       "action": "cycle"
         *     }
         */
        PowerRequest: {
            /**
             * @description `on`, `off`, or `cycle` (off, MM_POWER_CYCLE_OFF_S, on)
             * @enum {string}
             */
            action: "on" | "off" | "cycle";
        };
        IncidentList: {
            incidents: components["schemas"]["Incident"][];
        };
        Incident: {
            id: number;
            /** Format: uuid */
            board_id: string;
            /** @description When the hang began: the board was last heard from, or its run passed its bound */
            started_at: string;
            /** @description When the board was marked `unresponsive` */
            detected_at: string;
            /** @description Why it was found hung */
            reason: string;
            /**
             * @description Where the recovery is
             * @enum {string}
             */
            phase: "detected" | "cycling" | "booting" | "checking" | "closed";
            /** @description What the recovery did, in order: power cycles and health-check runs (their operations) */
            actions: {
                at: string;
                /** @enum {string} */
                action: "power_cycle" | "health_check";
                operation_ids: number[];
                outcome?: string;
            }[];
            /** @description When it was back in service (its health checks passed) */
            recovered_at: string | null;
            /**
             * @description null while open; `recovered` back in service, `bad` recovery gave up (the board is `bad`), `resolved` closed by a person
             * @enum {string|null}
             */
            outcome: "recovered" | "bad" | "resolved" | null;
            /** @description From `started_at` to `recovered_at` (the MTTR of this incident) */
            recovery_seconds: number | null;
        };
        TelemetrySamples: {
            /** @description One sample a minute (the first of each), oldest first. */
            samples: components["schemas"]["TelemetrySample"][];
        };
        HealthCheckList: {
            health_checks: components["schemas"]["HealthCheck"][];
            total: number;
        };
        HealthCheck: {
            id: number;
            name: string;
            invocation_id: number;
            board_selector: {
                [key: string]: string;
            };
            interval_s: number;
            expect: {
                /**
                 * @example {
                 *       "fps": {
                 *         "min": 10
                 *       },
                 *       "latency_ms": {
                 *         "max": 150
                 *       }
                 *     }
                 */
                metrics?: {
                    [key: string]: {
                        min?: number;
                        max?: number;
                    };
                };
            };
            created_at: string;
            updated_at: string;
        };
        HealthCheckInput: {
            name: string;
            invocation_id: number;
            /**
             * @example {
             *       "mm/board-model": "kv260",
             *       "camera": "yes"
             *     }
             */
            board_selector: {
                [key: string]: string;
            };
            interval_s: number;
            expect?: {
                /**
                 * @example {
                 *       "fps": {
                 *         "min": 10
                 *       },
                 *       "latency_ms": {
                 *         "max": 150
                 *       }
                 *     }
                 */
                metrics?: {
                    [key: string]: {
                        min?: number;
                        max?: number;
                    };
                };
            };
        };
        HealthCheckPatch: {
            name?: string;
            invocation_id?: number;
            /**
             * @example {
             *       "mm/board-model": "kv260",
             *       "camera": "yes"
             *     }
             */
            board_selector?: {
                [key: string]: string;
            };
            interval_s?: number;
            expect?: {
                /**
                 * @example {
                 *       "fps": {
                 *         "min": 10
                 *       },
                 *       "latency_ms": {
                 *         "max": 150
                 *       }
                 *     }
                 */
                metrics?: {
                    [key: string]: {
                        min?: number;
                        max?: number;
                    };
                };
            };
        };
        HealthCheckRunNow: {
            runs: components["schemas"]["Operation"][];
        };
        OperationList: {
            operations: components["schemas"]["Operation"][];
            total: number;
        };
        BoardChoice: {
            /**
             * Format: uuid
             * @description The board; may be left out when exactly one is registered.
             */
            board_id?: string;
        };
        ExecuteRequest: components["schemas"]["BoardChoice"] & {
            /**
             * @description Run on any board whose labels hold every pair (instead of board_id): the first matching board online, not in maintenance, not bad, idle (longest idle first)
             * @example {
             *       "mm/board-model": "kv260",
             *       "camera": "yes"
             *     }
             */
            board_selector?: {
                [key: string]: string;
            };
            /** @description Waiting selector work is taken by priority (−100…100, default 0), then age */
            priority?: number;
            /** @description Fail with `queue_timeout` if it has not started after this many seconds (default MM_QUEUE_TIMEOUT_S) */
            queue_timeout_s?: number;
            /** @description Run the runner this many times (1–100, default 1): `result.runs` holds each run's metrics, `result.summary` per metric `{ n, median, q1, q3, ci95 }` (docs/results.md) */
            repeat?: number;
            /** @description Runs before the counted ones, not counted (0–20, default 0) */
            warmup?: number;
        };
        MetricSeries: {
            points: components["schemas"]["MetricPoint"][];
        };
        MetricPoint: {
            operation_id: number;
            board_id: string | null;
            finished_at: string;
            value: number;
            summary?: components["schemas"]["MetricSummary"];
        };
        MetricSummary: {
            n: number;
            median: number;
            q1: number;
            q3: number;
            /** @description 95 % interval of the median (exact, from order statistics); with n < 6 the range */
            ci95: [
                number,
                number
            ];
        };
        StoredPacs: {
            /** Format: uuid */
            board_id: string;
            /** @description As the last query listed them; null: never listed */
            pacs: components["schemas"]["PacRecord"][] | null;
            /** @description The board's `active_pac` */
            active: string | null;
            /**
             * Format: date-time
             * @description When that query ran
             */
            listed_at: string | null;
            /** @description Seconds since `listed_at` */
            age_s: number | null;
            /** @description Ask the board again: never listed, listed before its current connection, or more than 24 h ago */
            stale: boolean;
            stale_reason: string | null;
            /** @description A `pac_query` of this board queued or running: follow it rather than queue another */
            query_operation_id: number | null;
        };
        PacRecord: {
            /** @example zcu104-platform-cfg1 */
            name: string;
            active: boolean;
            /**
             * @description The board the assets are for, as the table header names it
             * @example zcu104
             */
            board: string;
            /** @example /boot/firmware/xlnx-config/test_pac/hwconfig/cfg1/zcu104 */
            assets_dir: string;
        };
        PacQueryAnswer: {
            /** Format: uuid */
            board_id: string;
            pacs: components["schemas"]["PacRecord"][];
            /** @description The active PAC's name, or null when none is active */
            active: string | null;
        };
        PacQueryRequest: {
            /**
             * Format: uuid
             * @description The board; may be left out when exactly one is registered.
             */
            board_id?: string;
        };
        PacActivateRequest: {
            /**
             * Format: uuid
             * @description The board; may be left out when exactly one is registered.
             */
            board_id?: string;
            /**
             * @description A PAC configuration name as the query lists it
             * @example zcu104-platform-cfg1
             */
            pac: string;
        };
        PacInstallAnswer: {
            /** Format: uuid */
            board_id: string;
            /** @description The installed PAC folder */
            pac: string;
            pacs: components["schemas"]["PacRecord"][];
            /** @description The active PAC's name, or null when none is active */
            active: string | null;
        };
        BoardApps: {
            /** Format: uuid */
            board_id: string;
            apps: components["schemas"]["AppRecord"][];
            /** @description The active app's name, or null */
            active: string | null;
            dpu: components["schemas"]["DpuFacts"];
            vai_version: string | null;
            /** @description The xclbin /etc/vart.conf names */
            vart_target: string | null;
            /** @description When this was last read from the board (null: never; `?refresh=1` asks it now) */
            reported_at: string | null;
        };
        AppRecord: {
            /** @example kv260-benchmark-b4096 */
            name: string;
            /**
             * @description `Accel_type` of the listing
             * @example XRT_FLAT
             */
            type: string;
            base?: string;
            active: boolean;
            /** @description The slot it holds, when active */
            slot?: number;
            /** @description The DPU fingerprint the board showed while this app was last active */
            dpu_fingerprint?: string;
        };
        /** @description The DPU as `xdputil query` reports it, or null (no xdputil, or no DPU answering) */
        DpuFacts: {
            /** @example DPUCZDX8G_ISA1_B4096 */
            arch: string;
            /** @example 0x101000016010407 */
            fingerprint: string;
            frequency_mhz?: number;
            cores: number;
        } | null;
        AppLoadRequest: {
            /**
             * Format: uuid
             * @description The board; may be left out when exactly one is registered.
             */
            board_id?: string;
            /**
             * @description An accelerated application's name, as the board lists it
             * @example kv260-benchmark-b4096
             */
            app: string;
        };
        AppUnloadRequest: {
            /**
             * Format: uuid
             * @description The board; may be left out when exactly one is registered.
             */
            board_id?: string;
        };
        /**
         * @example {
         *       "requires_app": "kv260-benchmark-b4096"
         *     }
         */
        PatchInvocation: {
            name?: string;
            description?: string;
            /**
             * @description The accelerated application its runs need (docs/accelerators.md): a run on a board where it is not active loads it first (`result.app_loaded: true`); the scheduler prefers idle boards that have it active. `null` clears it (the invocation then shows no `requires_app`).
             * @example kv260-benchmark-b4096
             */
            requires_app?: string | null;
        };
        Enrolled: {
            /** Format: uuid */
            board_id: string;
            /** @description The board token; keep it (MM_BOARD_TOKEN_FILE). */
            token: string;
        };
        EnrollPending: {
            /** Format: uuid */
            board_id: string;
            /** @enum {string} */
            status: "pending";
        };
        /**
         * @example {
         *       "key": "mmk_…",
         *       "machine_id": "5f1c0e8e0e9a4a0c9d6f1e2b3c4d5e6f",
         *       "hostname": "kria-07"
         *     }
         */
        Enroll: {
            /** @description The provisioning key (`MM_PROVISIONING_KEY`). */
            key: string;
            /** @description The board's stable id (`/etc/machine-id`): the same machine enrolling again gets the same board. */
            machine_id: string;
            /** @description The board's host name; the new board's name. */
            hostname: string;
            /** @description What the agent found on the board (arch, os, ...). */
            facts?: {
                [key: string]: unknown;
            };
            /** @description Re-enrolling: the board's current token, which proves the caller is the board (without it, a board that exists is held for an admin unless the key is `auto` and the board is not connected). */
            token?: string;
        };
        ProvisioningKeyList: {
            provisioning_keys: components["schemas"]["ProvisioningKey"][];
            total: number;
        };
        ProvisioningKey: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description Every board enrolled with the key starts with these labels. */
            labels: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            expires_at: string | null;
            /** @description How many boards may enroll with it; null: no limit. */
            max_boards: number | null;
            /** @description How many boards have enrolled with it so far. */
            boards_enrolled: number;
            /**
             * @description `manual`: enrolled boards stay `pending` until an admin approves them.
             * @enum {string}
             */
            approval: "auto" | "manual";
            created_by: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
        };
        NewProvisioningKey: components["schemas"]["ProvisioningKey"] & {
            /** @description The key (`MM_PROVISIONING_KEY` of the agent). Shown this once; only its hash is stored. */
            key: string;
            /** @description The one line that installs the agent on a board and enrolls it with this key (docs/packages.md); it names MM_PUBLIC_URL, else the address the request came to */
            install_command: string;
            /** @description Set when MM_PUBLIC_URL is not: the command names the address the request came to, which a board may not reach */
            install_warning: string | null;
        };
        /**
         * @example {
         *       "name": "lab-2 boards",
         *       "labels": {
         *         "site": "lab-2"
         *       },
         *       "max_boards": 20,
         *       "approval": "auto"
         *     }
         */
        CreateProvisioningKey: {
            name: string;
            /**
             * @example {
             *       "site": "lab-2",
             *       "rack": "a"
             *     }
             */
            labels?: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @description When it stops working (ISO 8601); left out or null: never
             */
            expires_at?: string | null;
            max_boards?: number | null;
            /**
             * @default auto
             * @enum {string}
             */
            approval: "auto" | "manual";
        };
        DownloadList: {
            downloads: components["schemas"]["Download"][];
            total: number;
            /** @description The newest agent version served (what an agent update installs by default) */
            agent_version: string | null;
            /** @description What the control plane cannot serve, and why (e.g. no packages built in MM_PACKAGES_DIR) */
            missing: string[];
        };
        Download: {
            /** @example mm-agent_0.1.0_arm64.deb */
            name: string;
            /** @enum {string} */
            kind: "agent_package" | "install_script" | "cli";
            version: string | null;
            /** @description Debian architecture of an agent package (`arm64`, `amd64`) */
            arch: string | null;
            size: number;
            sha256: string;
            url: string;
        };
        /**
         * @example {
         *       "version": "0.2.0"
         *     }
         */
        AgentUpdate: {
            /** @description Default: the newest version the control plane serves */
            version?: string;
        };
        Rollout: {
            id: number;
            /** @enum {string} */
            kind: "execute" | "pac_install" | "pac_activate" | "script_deploy" | "agent_update" | "app_install" | "app_load" | "power_cycle";
            /** @enum {string} */
            status: "running" | "paused" | "succeeded" | "failed" | "aborted" | "cancelled";
            board_selector: {
                [key: string]: string;
            };
            invocation_id: number | null;
            params: {
                [key: string]: unknown;
            };
            batch_size: number | null;
            batch_interval_s: number;
            abort: {
                /**
                 * @description Abort once the failed share of finished boards reaches this (percent)
                 * @example 50
                 */
                failure_percent: number;
                /**
                 * @description …but only once this many boards have finished
                 * @example 2
                 */
                min_finished: number;
            } | null;
            created_by: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            finished_at: string | null;
            counts: {
                pending: number;
                queued: number;
                running: number;
                succeeded: number;
                failed: number;
                cancelled: number;
                skipped: number;
            };
            boards: {
                board_id: string | null;
                board_name: string;
                operation_id: number | null;
                /** @enum {string} */
                status: "pending" | "queued" | "running" | "succeeded" | "failed" | "cancelled" | "skipped";
                /** @description Its phase (0 first) */
                phase: number;
                /** @description The step's run time: `result.metrics.run_ms`, else the run's `duration_ms` */
                run_ms: number | null;
                /** @description The step operation's `result.metrics` */
                metrics: {
                    [key: string]: number;
                } | null;
                /**
                 * Format: date-time
                 * @description Running on a board that went offline: since when (null otherwise); after `MM_BOARD_LOST_S` the step fails `board_lost`
                 * @example 2026-11-21T10:00:00.000Z
                 */
                board_offline_since: string | null;
                /**
                 * @description Why a failed or cancelled step ended so (its operation's `error`); null otherwise
                 * @example {
                 *       "code": "exit_code",
                 *       "message": "the runner exited with status 3"
                 *     }
                 */
                error: {
                    code: string;
                    message: string;
                } | null;
            }[];
            /** @description Boards the selector matched that the rollout left out, and why (`include_maintenance`, `include_bad` take them) */
            left_out: {
                board_id: string;
                board_name: string;
                /** @enum {string} */
                reason: "maintenance" | "bad";
            }[];
        };
        /**
         * @example {
         *       "kind": "pac_activate",
         *       "board_selector": {
         *         "mm/board-model": "kv260"
         *       },
         *       "params": {
         *         "pac": "kv260-cfg1"
         *       },
         *       "batch_size": 1,
         *       "abort": {
         *         "failure_percent": 50,
         *         "min_finished": 2
         *       }
         *     }
         */
        RolloutCreate: {
            /** @enum {string} */
            kind: "execute" | "pac_install" | "pac_activate" | "script_deploy" | "agent_update" | "app_install" | "app_load" | "power_cycle";
            /**
             * @example {
             *       "mm/board-model": "kv260",
             *       "camera": "yes"
             *     }
             */
            board_selector: {
                [key: string]: string;
            };
            /** @description `execute`: the invocation to run on every board */
            invocation_id?: number;
            /**
             * @description `pac_install`: `{ archive_sha256 }`; `pac_activate`: `{ pac }`; `script_deploy`: `{ script_id }`; `agent_update`: `{ version? }`; `app_install`: `{ archive_sha256 }`; `app_load`: `{ app }`
             * @example {
             *       "pac": "kv260-cfg1"
             *     }
             */
            params?: {
                [key: string]: unknown;
            };
            /** @description Boards per phase; without it every board starts at once */
            batch_size?: number;
            /** @description Wait between the end of one phase and the start of the next */
            batch_interval_s?: number;
            abort?: {
                /**
                 * @description Abort once the failed share of finished boards reaches this (percent)
                 * @example 50
                 */
                failure_percent: number;
                /**
                 * @description …but only once this many boards have finished
                 * @example 2
                 */
                min_finished: number;
            };
            /** @description Also boards in maintenance (left out by default, as selector work leaves them) */
            include_maintenance?: boolean;
            /** @description Also boards whose health is `bad` (left out by default) */
            include_bad?: boolean;
            /** @description `execute`: counted runs on each board (1–100, default 1; docs/results.md) */
            repeat?: number;
            /** @description `execute`: runs before the counted ones, not counted (0–20, default 0) */
            warmup?: number;
        };
        RolloutList: {
            rollouts: components["schemas"]["Rollout"][];
            total: number;
        };
        Reservation: {
            id: number;
            /**
             * Format: uuid
             * @description The board held (or named); null while a selector request waits
             */
            board_id: string | null;
            board_name: string | null;
            /** @description A request for any idle board matching these labels */
            board_selector: {
                [key: string]: string;
            } | null;
            /** @description Who holds it (a username, `MM_API_TOKEN`, or null with auth off) */
            user: string | null;
            note: string;
            /** @enum {string} */
            status: "waiting" | "active" | "ended";
            duration_s: number;
            requested_at: string;
            /** @description A request still waiting then ends (`wait_timeout`) */
            wait_until: string;
            starts_at: string | null;
            /** @description The lease ends by itself then, unless renewed */
            ends_at: string | null;
            ended_at: string | null;
            /**
             * @description `broken`: an admin ended another person's lease (audited)
             * @enum {string|null}
             */
            end_reason: "released" | "expired" | "broken" | "cancelled" | "wait_timeout" | null;
            ended_by: string | null;
            /** @description While waiting: its place in its line (the board named, or the selector), 1 first */
            position: number | null;
            /** @description While waiting: when the leases ahead of it end, if that can be told */
            estimated_start_at: string | null;
        };
        ReservationCreate: {
            /** Format: uuid */
            board_id?: string;
            /**
             * @example {
             *       "mm/board-model": "kv260",
             *       "camera": "yes"
             *     }
             */
            board_selector?: {
                [key: string]: string;
            };
            duration_s: number;
            note?: string;
            /** @description How long the request may wait for a board (default 3600) */
            wait_s?: number;
        };
        ReservationList: {
            reservations: components["schemas"]["Reservation"][];
            total: number;
        };
        ReservationRenew: {
            duration_s: number;
        };
        BaselineList: {
            baselines: components["schemas"]["Baseline"][];
            total: number;
        };
        Baseline: {
            id: number;
            name: string;
            invocation_id: number | null;
            operation_ids: number[];
            /** @description Every counted run of its operations, copied in when it was saved */
            runs: {
                operation_id: number;
                board_id: string | null;
                metrics: {
                    [key: string]: number;
                };
            }[];
            /** @description board id → metric → summary of its runs */
            summary_by_board: {
                [key: string]: {
                    [key: string]: components["schemas"]["MetricSummary"];
                };
            };
            /** @description operation id → that run's `result.context` */
            contexts: {
                [key: string]: components["schemas"]["RunContext"];
            };
            created_by: string | null;
            created_at: string;
        };
        RunContext: {
            /** @description file kind → sha256 */
            files: {
                [key: string]: string;
            };
            board_id: string | null;
            board_model: string | null;
            active_pac: string | null;
            app: string | null;
            dpu_fingerprint: string | null;
            dpu_mhz: number | null;
            agent_version: string | null;
            runner_version: string | null;
            start_temperature_c: number | null;
        };
        /**
         * @example {
         *       "name": "resnet50-kv260",
         *       "operation_ids": [
         *         12,
         *         13,
         *         14
         *       ]
         *     }
         */
        CreateBaseline: {
            /** @example resnet50-kv260-2026-11 */
            name: string;
            /** @description Succeeded execute operations of one invocation (with repeats, each adds its counted runs) */
            operation_ids: number[];
        };
        Comparison: {
            verdict: components["schemas"]["Verdict"];
            baseline: {
                id: number;
                name: string;
            };
            operation_ids: number[];
            rollout_id: number | null;
            metrics: {
                metric: string;
                /** @enum {string} */
                better: "higher" | "lower";
                threshold_pct: number;
                boards: {
                    board_id: string;
                    baseline: {
                        median: number;
                        ci95: [
                            number,
                            number
                        ];
                    };
                    current: {
                        median: number;
                        ci95: [
                            number,
                            number
                        ];
                    };
                    /** @description The shift (Hodges–Lehmann) in percent of the baseline median */
                    change_pct: number | null;
                    /** @description Its exact 95 % interval (Mann–Whitney); null when the runs are too few for one */
                    ci95_pct: [
                        number,
                        number
                    ] | null;
                    verdict: components["schemas"]["Verdict"];
                    n: {
                        baseline: number;
                        current: number;
                    };
                    /**
                     * @description Whose baseline runs: this board's, its board model's, or all of the baseline's
                     * @enum {string}
                     */
                    baseline_from: "board" | "board_model" | "all";
                }[];
                verdict: components["schemas"]["Verdict"];
            }[];
            /** @description Metrics of unknown direction (give `directions`) */
            skipped_metrics: string[];
            /** @description field → [baseline, current] of what the results depend on */
            differs: {
                [key: string]: [
                    unknown,
                    unknown
                ];
            };
        };
        /** @enum {string} */
        Verdict: "regressed" | "improved" | "unchanged" | "inconclusive";
        /**
         * @example {
         *       "baseline": "resnet50-kv260",
         *       "rollout_id": 7,
         *       "thresholds": {
         *         "e2e_fps": 2
         *       }
         *     }
         */
        ComparisonRequest: {
            /** @description The baseline, by name or id */
            baseline: string | number;
            /** @description The new runs: succeeded execute operations */
            operation_ids?: number[];
            /** @description Or an execute rollout: its boards' operations (those that did not succeed are left out) */
            rollout_id?: number;
            /** @description metric → percent; default 3 % */
            thresholds?: {
                [key: string]: number;
            };
            /** @description Which way is better for metrics whose name does not say (`*_fps` higher; `latency*`, `*_ms`, `energy*`, `*power*`, `*temperature*` lower) */
            directions?: {
                [key: string]: "higher" | "lower";
            };
        };
        WebhookList: {
            webhooks: components["schemas"]["Webhook"][];
            total: number;
        };
        Webhook: {
            /** Format: uuid */
            id: string;
            url: string;
            events: string[];
            /**
             * @description `standard`: `{ type, timestamp, data }`; `slack`: a Slack incoming-webhook message with blocks
             * @enum {string}
             */
            format: "standard" | "slack";
            enabled: boolean;
            /** @description Why the server turned it off (the receiver answered 410 Gone); null when on, or turned off by a person */
            disabled_reason: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
        };
        NewWebhook: components["schemas"]["Webhook"] & {
            /**
             * @description The signing secret (`whsec_` + base64), shown this once: receivers verify `webhook-signature` with it (Standard Webhooks)
             * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
             */
            secret: string;
        };
        /**
         * @example {
         *       "url": "https://ci.example.org/hooks/model-manager",
         *       "events": [
         *         "rollout.finished",
         *         "regression.detected"
         *       ],
         *       "format": "standard"
         *     }
         */
        CreateWebhook: {
            /** @example https://ci.example.org/hooks/model-manager */
            url: string;
            /**
             * @description The events sent to it
             * @example [
             *       "rollout.finished",
             *       "board.offline"
             *     ]
             */
            events: ("operation.finished" | "rollout.finished" | "board.health_changed" | "board.offline" | "board.enrolled" | "regression.detected" | "board.recovered")[];
            /**
             * @default standard
             * @enum {string}
             */
            format: "standard" | "slack";
            /** @default true */
            enabled: boolean;
        };
        /**
         * @example {
         *       "enabled": false
         *     }
         */
        WebhookPatch: {
            /** @example https://ci.example.org/hooks/model-manager */
            url?: string;
            /**
             * @description The events sent to it
             * @example [
             *       "rollout.finished",
             *       "board.offline"
             *     ]
             */
            events?: ("operation.finished" | "rollout.finished" | "board.health_changed" | "board.offline" | "board.enrolled" | "regression.detected" | "board.recovered")[];
            /** @enum {string} */
            format?: "standard" | "slack";
            enabled?: boolean;
        };
        WebhookDeliveryList: {
            deliveries: components["schemas"]["WebhookDelivery"][];
            total: number;
        };
        WebhookDelivery: {
            id: number;
            /**
             * @description The event type
             * @example rollout.finished
             */
            event: string;
            /** @description The event (its `webhook-id` is `msg_` and this id without dashes) */
            event_id: string;
            /** @enum {string} */
            status: "pending" | "delivered" | "failed";
            attempts: number;
            /** @description The receiver's last HTTP status; null when it never answered (refused, timed out, unreachable) */
            last_status_code: number | null;
            /** @description What went wrong with the last attempt (the start of the answer, a timeout, a refused address) */
            last_error: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            last_attempt_at: string | null;
            /**
             * Format: date-time
             * @description When it is tried next (pending only)
             * @example 2026-11-21T10:00:00.000Z
             */
            next_attempt_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            delivered_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
        };
        TerminalSessionList: {
            sessions: components["schemas"]["TerminalSession"][];
        };
        TerminalSession: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            board_id: string;
            board_name: string;
            /** Format: uuid */
            user_id: string | null;
            username: string | null;
            /** Format: date-time */
            started_at: string;
            /** Format: date-time */
            ended_at: string | null;
            /** @description The shell's exit status, when it exited */
            exit_code: number | null;
            /** @description `exited`, `client_left`, `idle_timeout`, `board_rebooting`, `link_lost`, `server_stopping`, `server_stopped`, `terminal_disabled`, `pty_failed`; null while it runs */
            end_reason: string | null;
            cols: number;
            rows: number;
            recording_bytes: number;
            recording_truncated: boolean;
        };
        User: {
            /** Format: uuid */
            id: string;
            /** @example alice */
            username: string;
            /** @enum {string} */
            role: "viewer" | "operator" | "admin";
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
        };
        /**
         * @example {
         *       "username": "alice",
         *       "password": "correct horse battery staple"
         *     }
         */
        Login: {
            username: string;
            password: string;
        };
        Me: {
            user: {
                id: string | null;
                username: string | null;
                /** @enum {string} */
                role: "viewer" | "operator" | "admin";
                /**
                 * Format: date-time
                 * @example 2026-11-21T10:00:00.000Z
                 */
                created_at: string | null;
            };
            /**
             * @description `off`: no user exists and no MM_API_TOKEN is set (a loopback development server)
             * @enum {string}
             */
            auth: "on" | "off";
            /** @enum {string} */
            via: "session" | "token" | "api_token" | "none";
        };
        /**
         * @example {
         *       "token": "mmu_…"
         *     }
         */
        TokenLogin: {
            token: string;
        };
        /**
         * @example {
         *       "current_password": "the old one",
         *       "new_password": "correct horse battery staple"
         *     }
         */
        ChangePassword: {
            current_password: string;
            new_password: string;
        };
        UserList: {
            users: components["schemas"]["User"][];
            total: number;
        };
        NewUser: components["schemas"]["User"] & {
            /** @description The generated password, shown this once (only when none was sent) */
            password?: string;
        };
        /**
         * @example {
         *       "username": "alice",
         *       "role": "operator"
         *     }
         */
        CreateUser: {
            username: string;
            /** @description Left out: the server generates one and answers it this once */
            password?: string;
            /** @enum {string} */
            role: "viewer" | "operator" | "admin";
        };
        /**
         * @example {
         *       "role": "viewer"
         *     }
         */
        UpdateUser: {
            /** @enum {string} */
            role?: "viewer" | "operator" | "admin";
            password?: string;
            /** @description `true`: also revoke all the user's personal tokens (with a password reset: nothing the old holder kept works) */
            revoke_tokens?: boolean;
        };
        TokenList: {
            tokens: components["schemas"]["Token"][];
            total: number;
        };
        Token: {
            /** Format: uuid */
            id: string;
            name: string;
            /**
             * Format: uuid
             * @description Whose token it is
             */
            user_id: string;
            /** @description Its owner's name */
            username: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            expires_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            last_used_at: string | null;
        };
        NewToken: components["schemas"]["Token"] & {
            /** @description The token (`Authorization: Bearer <token>`). Shown this once; only its hash is stored. */
            token: string;
        };
        /**
         * @example {
         *       "name": "ci runner",
         *       "expires_at": "2027-01-01T00:00:00.000Z"
         *     }
         */
        CreateToken: {
            name: string;
            /**
             * Format: date-time
             * @description When it stops working (ISO 8601); left out or null: never
             */
            expires_at?: string | null;
        };
        AuditEventList: {
            events: components["schemas"]["AuditEvent"][];
            total: number;
        };
        AuditEvent: {
            id: number;
            /**
             * Format: date-time
             * @example 2026-11-21T10:00:00.000Z
             */
            at: string;
            /** @description Username (`MM_API_TOKEN` for the shared token); null for a failed sign-in or auth off */
            user: string | null;
            user_id: string | null;
            /** @example invocation.execute */
            action: string;
            /** @example /api/invocations/12/execute/ */
            target: string | null;
            ip: string | null;
            request_id: string | null;
            detail: {
                [key: string]: unknown;
            } | null;
            /** @description The acting user's name (today's, if renamed); as `user` for MM_API_TOKEN */
            user_name: string | null;
            /**
             * @description The name of the board, invocation, device script, user or token the target names, where known
             * @example night run
             */
            target_name: string | null;
            /** @description How many identical consecutive actions this entry stands for (a servo drag, a held motor button) */
            count: number;
            /**
             * Format: date-time
             * @description When the last of them happened (`at` when count is 1)
             * @example 2026-11-21T10:00:00.000Z
             */
            last_at: string;
        };
        AuditActions: {
            actions: string[];
        };
        /** @description RFC 9457 problem details */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @description Stable snake_case code (`validation_failed`, `invocation_not_found`, …) */
            code: string;
            errors?: {
                field: string;
                message: string;
            }[];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Healthy */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description The database is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    getDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAgentAsyncapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description AsyncAPI 3.0 document */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AsyncApiDocument"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description Missing or wrong token (problem+json, `unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocations: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
                /** @description Only invocations whose name contains this (case-insensitive). */
                q?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of invocations and the number of all matches */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvocationList"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`, …) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postInvocationsCreate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateInvocation"];
            };
        };
        responses: {
            /** @description The new invocation */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Invocation"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`, …) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The invocation */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvocationDetails"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation (problem+json, `invocation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteInvocationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation (problem+json, `invocation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    patchInvocationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PatchInvocation"];
            };
        };
        responses: {
            /** @description The invocation as it is now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Invocation"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`, …) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation (problem+json, `invocation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postInvocationsIdUpload: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /** @enum {string} */
                    file_type: "parameter" | "bitstream" | "weights" | "input_video";
                    /** Format: binary */
                    file: string;
                };
            };
        };
        responses: {
            /** @description The stored file */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileRecord"];
                };
            };
            /** @description Bad input (`validation_failed`, …); `invalid_video`: an `input_video` whose bytes start with no video container (nothing stored); `invalid_parameter_file` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation (problem+json, `invocation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The file is larger than MM_MAX_UPLOAD_BYTES; nothing is kept */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not multipart/form-data */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocationsIdFilesKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
                kind: "parameter" | "bitstream" | "weights" | "input_video" | "output_video";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file */
            200: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description The requested byte range (`Range` honoured; one range per response) */
            206: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    /** @description `bytes <first>-<last>/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description With `MM_BLOB_STORE=s3` and `MM_S3_REDIRECT_DOWNLOADS=1`: `Location` is a presigned URL on the object store (valid 1 h) that serves the bytes and honours `Range` */
            302: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match` / `If-Modified-Since`) */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation, or it has no file of that kind */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Range not satisfiable (problem+json, `Content-Range: bytes *\/size`) */
            416: {
                headers: {
                    /** @description `bytes *\/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    putInvocationsIdFilesKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
                kind: "parameter" | "bitstream" | "weights" | "input_video";
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AttachByDigest"];
            };
        };
        responses: {
            /** @description The attached file (replaces that kind) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileRecord"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`, …) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation, not an input kind, or `content_not_found`: the server does not hold that content (upload it) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteInvocationsIdFilesKind: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
                kind: "parameter" | "bitstream" | "weights" | "input_video" | "output_video";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation, or it has no file of that kind */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocationsIdVideo: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The output video */
            200: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "video/mp4": string;
                    "video/x-msvideo": string;
                };
            };
            /** @description The requested byte range (`Range` honoured; one range per response) */
            206: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    /** @description `bytes <first>-<last>/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "video/mp4": string;
                    "video/x-msvideo": string;
                };
            };
            /** @description With `MM_BLOB_STORE=s3` and `MM_S3_REDIRECT_DOWNLOADS=1`: `Location` is a presigned URL on the object store (valid 1 h) that serves the bytes and honours `Range` */
            302: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match` / `If-Modified-Since`) */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation, or it has no output video yet (`video_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Range not satisfiable (problem+json, `Content-Range: bytes *\/size`) */
            416: {
                headers: {
                    /** @description `bytes *\/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocationsIdDownload: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A streamed ZIP (attachment) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/zip": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation (problem+json, `invocation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postUploads: {
        parameters: {
            query?: never;
            header: {
                /** @description The tus version: 1.0.0 (412 otherwise) */
                "tus-resumable": string;
                /** @description The file size in bytes */
                "upload-length": string;
                /** @description invocation_id, file_type, filename, sha256? (tus encoding) */
                "upload-metadata": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created: `Location` is the upload URL (`/api/uploads/<id>/`) */
            201: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    /** @description Bytes received so far */
                    "Upload-Offset"?: string;
                    /** @description When the upload is removed if untouched (HTTP date) */
                    "Upload-Expires"?: string;
                    /** @description The upload URL (`/api/uploads/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or bad Upload-Length / Upload-Metadata (`validation_failed`) */
            400: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such invocation (problem+json, `invocation_not_found`) */
            404: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Tus-Resumable missing or not 1.0.0 (`tus_version_unsupported`) */
            412: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Upload-Length over MM_MAX_UPLOAD_BYTES (`payload_too_large`) */
            413: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    optionsUploads: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Tus-Version, Tus-Extension (creation, termination, expiration), Tus-Max-Size (MM_MAX_UPLOAD_BYTES) */
            204: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getUploadsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The upload */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Upload"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such upload (failed, terminated or expired; a finished one answers until it expires): `upload_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postUploadsId: {
        parameters: {
            query?: never;
            header: {
                /** @description The tus version: 1.0.0 (412 otherwise) */
                "tus-resumable": string;
                "x-http-method-override": "PATCH" | "DELETE";
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/offset+octet-stream": string;
            };
        };
        responses: {
            /** @description As PATCH or DELETE */
            204: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    /** @description Bytes received so far */
                    "Upload-Offset"?: string;
                    /** @description When the upload is removed if untouched (HTTP date) */
                    "Upload-Expires"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No or another X-HTTP-Method-Override (`validation_failed`), or as PATCH */
            400: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such upload (failed, terminated or expired; a finished one answers until it expires): `upload_not_found` */
            404: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Tus-Resumable missing or not 1.0.0 (`tus_version_unsupported`) */
            412: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteUploadsId: {
        parameters: {
            query?: never;
            header: {
                /** @description The tus version: 1.0.0 (412 otherwise) */
                "tus-resumable": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Terminated */
            204: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such upload (failed, terminated or expired; a finished one answers until it expires): `upload_not_found` */
            404: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Tus-Resumable missing or not 1.0.0 (`tus_version_unsupported`) */
            412: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    optionsUploadsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The same answer as OPTIONS /api/uploads/ */
            204: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    headUploadsId: {
        parameters: {
            query?: never;
            header: {
                /** @description The tus version: 1.0.0 (412 otherwise) */
                "tus-resumable": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires */
            200: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    /** @description Bytes received so far */
                    "Upload-Offset"?: string;
                    /** @description When the upload is removed if untouched (HTTP date) */
                    "Upload-Expires"?: string;
                    /** @description The file size */
                    "Upload-Length"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such upload (failed, terminated or expired; a finished one answers until it expires): `upload_not_found` */
            404: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Tus-Resumable missing or not 1.0.0 (`tus_version_unsupported`) */
            412: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    patchUploadsId: {
        parameters: {
            query?: never;
            header: {
                /** @description The tus version: 1.0.0 (412 otherwise) */
                "tus-resumable": string;
                "upload-offset": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/offset+octet-stream": string;
            };
        };
        responses: {
            /** @description Appended: `Upload-Offset` is the new offset */
            204: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    /** @description Bytes received so far */
                    "Upload-Offset"?: string;
                    /** @description When the upload is removed if untouched (HTTP date) */
                    "Upload-Expires"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `checksum_mismatch` (the upload is removed; nothing attached), `invalid_video` (an `input_video` that is no video container: removed, nothing attached), `upload_too_long` (the body runs past Upload-Length: none of it is kept, nothing attached) or a bad Upload-Offset */
            400: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such upload (failed, terminated or expired; a finished one answers until it expires): `upload_not_found` */
            404: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `offset_mismatch`: Upload-Offset is not the upload's offset (HEAD, then continue) */
            409: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Tus-Resumable missing or not 1.0.0 (`tus_version_unsupported`) */
            412: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not application/offset+octet-stream */
            415: {
                headers: {
                    /** @description `1.0.0` */
                    "Tus-Resumable"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getVideos: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of videos and the number of all */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["VideoList"];
                };
            };
            /** @description Bad paging parameters (problem+json) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getVideosResultsPath: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                path: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The video */
            200: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "video/mp4": string;
                };
            };
            /** @description The requested byte range */
            206: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    /** @description `bytes <first>-<last>/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "video/mp4": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such video inside the results folder */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Range not satisfiable */
            416: {
                headers: {
                    /** @description `bytes *\/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDeviceScripts: {
        parameters: {
            query?: {
                /** @description Only scripts of this device type. */
                device_type?: string;
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the catalogue */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceScriptList"];
                };
            };
            /** @description A bad filter or page */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postDeviceScripts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeviceScriptCreate"];
            };
        };
        responses: {
            /** @description The new entry */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceScript"];
                };
            };
            /** @description Malformed JSON or a field that breaks its rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDeviceScriptsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The entry */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceScript"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such entry (or a malformed id) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    putDeviceScriptsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeviceScriptReplace"];
            };
        };
        responses: {
            /** @description The entry as replaced */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceScript"];
                };
            };
            /** @description Malformed JSON, a missing field or one that breaks its rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such entry (or a malformed id) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The body is not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteDeviceScriptsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such entry (or a malformed id) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchDeviceScriptsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeviceScriptPatch"];
            };
        };
        responses: {
            /** @description The entry as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceScript"];
                };
            };
            /** @description Malformed JSON or a field that breaks its rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such entry (or a malformed id) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The body is not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDeviceScriptsIdProxyPath: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
                /** @description The script's route, may be empty */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The script's answer (any status it sends; JSON from the GPIO script) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `script_unreachable`: nothing listens on the port on the board; or the request to the script failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_timeout`: the board did not answer in time */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    putDeviceScriptsIdProxyPath: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
                /** @description The script's route, may be empty */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": unknown;
            };
        };
        responses: {
            /** @description The script's answer (any status it sends; JSON from the GPIO script) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `script_unreachable`: nothing listens on the port on the board; or the request to the script failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_timeout`: the board did not answer in time */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postDeviceScriptsIdProxyPath: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
                /** @description The script's route, may be empty */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": unknown;
            };
        };
        responses: {
            /** @description The script's answer (any status it sends; JSON from the GPIO script) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `script_unreachable`: nothing listens on the port on the board; or the request to the script failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_timeout`: the board did not answer in time */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteDeviceScriptsIdProxyPath: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
                /** @description The script's route, may be empty */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The script's answer (any status it sends; JSON from the GPIO script) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `script_unreachable`: nothing listens on the port on the board; or the request to the script failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_timeout`: the board did not answer in time */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchDeviceScriptsIdProxyPath: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
                /** @description The script's route, may be empty */
                path: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": unknown;
            };
        };
        responses: {
            /** @description The script's answer (any status it sends; JSON from the GPIO script) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `script_unreachable`: nothing listens on the port on the board; or the request to the script failed */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_timeout`: the board did not answer in time */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDeviceScriptsIdStream: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
                /** @description Same as the Last-Event-ID header */
                last_event_id?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An endless event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDeviceScriptsIdCamera: {
        parameters: {
            query?: {
                /** @description The board; may be left out when exactly one is registered. */
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An endless MJPEG stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "multipart/x-mixed-replace": string;
                };
            };
            /** @description `board_required`: several boards are registered and none is named */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `too_many_camera_viewers`: this user (or, with auth off, this address) already has MM_CAMERA_MAX_VIEWERS_PER_USER camera streams open here; `Retry-After` */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `script_unreachable`: nothing listens on the port on the board; `not_a_camera_stream`: the script does not serve MJPEG there */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline` (or `no_board`): the board is not connected; `camera_full`: the camera already has MM_CAMERA_MAX_VIEWERS viewers here (`Retry-After`) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_timeout`: the board did not answer in time */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDeviceScriptsIdFile: {
        parameters: {
            query?: {
                version?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The program (attachment) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description `validation_failed` (a `version` holding a NUL) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    putDeviceScriptsIdFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /** Format: binary */
                    file: string;
                };
                "application/json": {
                    sha256: string;
                    filename?: string;
                };
            };
        };
        responses: {
            /** @description The program of that version (it replaces what the version had; other versions keep theirs) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceScriptProgram"];
                };
            };
            /** @description `validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The file is larger than MM_MAX_UPLOAD_BYTES; nothing is kept */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not multipart/form-data */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDeviceScriptsIdPrograms: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Programs and deployments */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        programs: components["schemas"]["DeviceScriptProgram"][];
                        deployments: components["schemas"]["BoardScript"][];
                        total: number;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postDeviceScriptsIdDeploy: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ScriptBoardChoice"];
            };
        };
        responses: {
            /** @description The operation, succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S) */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The operation was cancelled */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description It failed on the board (`script_unhealthy` or `script_unstable`: the previous version is back; `script_dir_refused`, `checksum_mismatch`, `script_not_deployed`, ...); the problem carries the operation */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_offline`, `no_board` */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postDeviceScriptsIdStart: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ScriptBoardChoice"];
            };
        };
        responses: {
            /** @description The operation, succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S) */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The operation was cancelled */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description It failed on the board (`script_unhealthy` or `script_unstable`: the previous version is back; `script_dir_refused`, `checksum_mismatch`, `script_not_deployed`, ...); the problem carries the operation */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_offline`, `no_board` */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postDeviceScriptsIdStop: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ScriptBoardChoice"];
            };
        };
        responses: {
            /** @description The operation, succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S) */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The operation was cancelled */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description It failed on the board (`script_unhealthy` or `script_unstable`: the previous version is back; `script_dir_refused`, `checksum_mismatch`, `script_not_deployed`, ...); the problem carries the operation */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_offline`, `no_board` */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postDeviceScriptsIdRestart: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ScriptBoardChoice"];
            };
        };
        responses: {
            /** @description The operation, succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S) */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The operation was cancelled */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description It failed on the board (`script_unhealthy` or `script_unstable`: the previous version is back; `script_dir_refused`, `checksum_mismatch`, `script_not_deployed`, ...); the problem carries the operation */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_offline`, `no_board` */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getDeviceScriptsIdLogs: {
        parameters: {
            query?: {
                board_id?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Its output, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description `validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `device_script_not_found`, `board_not_found`, `script_program_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `script_not_deployed` on that board, or the board failed to answer */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_offline` */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_timeout` */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoardsIdScripts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Its scripts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        scripts: components["schemas"]["BoardScript"][];
                        total: number;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postBoardsLabels: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BulkLabels"];
            };
        };
        responses: {
            /** @description The boards changed (oldest first) and how many */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkLabelsResult"];
                };
            };
            /** @description Bad input (`validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoards: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
                /** @description `key=value`; repeat it: boards holding every pair */
                label?: string | string[];
                status?: "online" | "offline" | "rebooting" | "pending" | "unresponsive";
                health?: "unknown" | "good" | "bad";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of boards (oldest first) and how many there are */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BoardList"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postBoards: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateBoard"];
            };
        };
        responses: {
            /** @description The board and its token */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewBoard"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_name_taken`: another board has that name (names are unique) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoardsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The board */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Board"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (problem+json, `board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteBoardsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (problem+json, `board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    patchBoardsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PatchBoard"];
            };
        };
        responses: {
            /** @description The board */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Board"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (problem+json, `board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_name_taken`: another board has that name (names are unique) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postBoardsIdHealthCheck: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The first run; `runs` holds every run queued */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheckRuns"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (problem+json, `board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_health_check`: no health check matches the board */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postBoardsIdPower: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PowerRequest"];
            };
        };
        responses: {
            /** @description The operation, succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description The operation, still running (`Location` names it) */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not an admin (nor the holder of the board) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (`board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `power_not_configured`: the board has no power controller */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the operation failed (`power_controller_offline`, `pdu_error`); the operation is in the body */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoardsIdIncidents: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Its incidents, newest first (at most 100) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IncidentList"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (`board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoardsIdTelemetry: {
        parameters: {
            query?: {
                /** @description Samples from this time on (default, and at most: the last 24 h). */
                since?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The samples */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TelemetrySamples"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such board (problem+json, `board_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getHealthChecks: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of health checks */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheckList"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postHealthChecks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HealthCheckInput"];
            };
        };
        responses: {
            /** @description The health check */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheck"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `health_check_not_found`, or `invocation_not_found` for the invocation named */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getHealthChecksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The health check */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheck"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `health_check_not_found`, or `invocation_not_found` for the invocation named */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteHealthChecksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `health_check_not_found`, or `invocation_not_found` for the invocation named */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    patchHealthChecksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HealthCheckPatch"];
            };
        };
        responses: {
            /** @description The health check */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheck"];
                };
            };
            /** @description Bad input (problem+json, `validation_failed`, `malformed_json`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `health_check_not_found`, or `invocation_not_found` for the invocation named */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postHealthChecksIdRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The runs queued */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthCheckRunNow"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `health_check_not_found`, or `invocation_not_found` for the invocation named */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_matching_board`: no online board matches its selector */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getOperations: {
        parameters: {
            query?: {
                board_id?: string;
                invocation_id?: number;
                kind?: string;
                status?: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                /** @description Only this health check's runs (a check's history) */
                health_check_id?: number;
                /** @description `1`: include the runs of health checks (`health_check_id` set), left out by default */
                health_checks?: "0" | "1";
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of operations and the number of all matches */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OperationList"];
                };
            };
            /** @description Bad filter (problem+json, `validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getOperationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such operation (problem+json, `operation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getOperationsIdLog: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The runner output and the agent/server notes, in order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such operation (problem+json, `operation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postOperationsIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Cancellation accepted; the operation as it is now */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`: a step of a rollout needs the role the rollout needs, admin for every kind but `execute`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such operation (problem+json, `operation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The operation already ended (problem+json, `operation_finished`, with `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getOperationsIdEvents: {
        parameters: {
            query?: {
                /** @description Replay only the last that many bytes (1–16777216) of the stored log, after one `log_skipped` event `{ "bytes": n }` (no id) saying how much came before; status and progress events are all replayed and live ones all follow. Ignored when resuming with `Last-Event-ID`. For a page that shows a tail of a long log. */
                log_tail_bytes?: string;
            };
            header?: {
                /** @description Resume after this event id */
                "last-event-id"?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description text/event-stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description The operation has ended and `Last-Event-ID` is its `end` or later: nothing more will come */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such operation (problem+json, `operation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postInvocationsIdTransfer: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["BoardChoice"];
            };
        };
        responses: {
            /** @description The operation succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S); `Location` names the operation */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Bad input, `board_required` (several boards, none named), `board_choice_conflict` (both board_id and board_selector), `no_matching_board` (no registered board matches the selector; nothing was created) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `invocation_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`), or `dpu_fingerprint_mismatch`: the weights are an xmodel compiled for another DPU than the named board's (`model_fingerprints`, `board_fingerprint`, `fitting_boards`); nothing was created */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postInvocationsIdExecute: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ExecuteRequest"];
            };
        };
        responses: {
            /** @description The operation succeeded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S); `Location` names the operation */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Bad input, `board_required` (several boards, none named), `board_choice_conflict` (both board_id and board_selector), `no_matching_board` (no registered board matches the selector; nothing was created) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `invocation_not_found` or `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`), or `dpu_fingerprint_mismatch`: the weights are an xmodel compiled for another DPU than the named board's (`model_fingerprints`, `board_fingerprint`, `fitting_boards`); nothing was created */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocationsIdMetrics: {
        parameters: {
            query: {
                /** @description The metric (`fps`, `run_ms`, ...) */
                name: string;
                /** @description `1`: include the runs of health checks (left out by default) */
                health_checks?: "0" | "1";
                /** @description The latest this many runs (default and most 1000) */
                limit?: number;
            };
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The points */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MetricSeries"];
                };
            };
            /** @description Bad input (`validation_failed`: no or a bad `name`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `invocation_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getInvocationsIdResults: {
        parameters: {
            query?: {
                /** @description One of the invocation's runs (default: its latest run that has results) */
                operation_id?: number;
            };
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The results, newline-delimited JSON */
            200: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                };
            };
            /** @description The requested byte range (`Range` honoured; one range per response) */
            206: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    /** @description `bytes <first>-<last>/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                };
            };
            /** @description With `MM_BLOB_STORE=s3` and `MM_S3_REDIRECT_DOWNLOADS=1`: a presigned URL on the object store */
            302: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match` / `If-Modified-Since`) */
            304: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad input (`validation_failed`: a bad `operation_id`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `invocation_not_found`, or `results_not_found`: no run of this invocation (or not that one) has results */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The range cannot be satisfied */
            416: {
                headers: {
                    /** @description `bytes *\/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoardsIdPacs: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stored list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredPacs"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postPacsQuery: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PacQueryRequest"];
            };
        };
        responses: {
            /** @description The board's PACs and the active one's name */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PacQueryAnswer"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, or `board_required` (several boards, none named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postPacsActivate: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PacActivateRequest"];
            };
        };
        responses: {
            /** @description The succeeded operation (`result`: `{ board_id, pac, active, pacs, boot_id, previous_boot_id }`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, `board_required`, or `pac_not_found` (the board does not list it; `pacs` names those it does) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postPacsInstall: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /**
                     * Format: binary
                     * @description .tar or .tar.gz of one PAC folder
                     */
                    file: string;
                    /** Format: uuid */
                    board_id?: string;
                };
            };
        };
        responses: {
            /** @description Installed: the PAC folder and the board's PACs now */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PacInstallAnswer"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed` (no `file` part, bad `board_id`), `malformed_multipart`, `board_required`, or `invalid_pac_archive` (the board refused the archive; the problem carries `operation`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The file is larger than MM_MAX_UPLOAD_BYTES; nothing is kept */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not multipart/form-data */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBoardsIdApps: {
        parameters: {
            query?: {
                /** @description `1` asks the board now (an `app_query` operation) instead of answering what it last reported */
                refresh?: "0" | "1" | "true" | "false";
            };
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The apps */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BoardApps"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why: `no_empty_slot`, `app_load_failed`, `app_load_timeout`, ...) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAppsLoad: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AppLoadRequest"];
            };
        };
        responses: {
            /** @description The succeeded operation (`result`: the board's apps and `app`, `loaded`, `slot`, `unloaded`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed`, `board_required`, or `app_not_found` (the board does not list it; `apps` names those it does) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why: `no_empty_slot`, `app_load_failed`, `app_load_timeout`, ...) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAppsUnload: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["AppUnloadRequest"];
            };
        };
        responses: {
            /** @description The succeeded operation (`result`: the board's apps and `unloaded`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed` or `board_required` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why: `no_empty_slot`, `app_load_failed`, `app_load_timeout`, ...) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAppsInstall: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 at once; `wait=<s>` caps the wait */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /**
                     * Format: binary
                     * @description .tar, .tar.gz or .zip of one app folder
                     */
                    file: string;
                    /** Format: uuid */
                    board_id?: string;
                };
            };
        };
        responses: {
            /** @description The succeeded operation (`result`: the board's apps and `app`, `listed`, `shell_type`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description `validation_failed` (no `file` part, bad `board_id`), `malformed_multipart`, `board_required`, or `invalid_app_archive` (the problem carries `operation`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_cancelled` (the problem carries `operation`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The file is larger than MM_MAX_UPLOAD_BYTES; nothing is kept */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not multipart/form-data */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why: `no_empty_slot`, `app_load_failed`, `app_load_timeout`, ...) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `no_board` (none registered) or `board_offline` (not connected; nothing was started) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAgentConnect: {
        parameters: {
            query?: never;
            header: {
                authorization: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching protocols: the agent link is open */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or invalid board token (problem+json, `unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a WebSocket upgrade request (problem+json, `upgrade_required`) */
            426: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Too many agents linking at once (MM_AGENT_HANDSHAKES_MAX): problem+json `server_busy` with Retry-After, answered before any database work; the agent retries after its backoff */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAgentEnroll: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Enroll"];
            };
        };
        responses: {
            /** @description Enrolled: the board and its token (a new token each time the same machine enrolls again) */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Enrolled"];
                };
            };
            /** @description The key needs approval (the board is pending), or a re-enrolment of an existing board is held for an admin; ask again after Retry-After */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EnrollPending"];
                };
            };
            /** @description Bad input (`validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `unauthorized`: the key is unknown, expired, used up or deleted */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `too_many_attempts`: too many refused enrolments from this address; Retry-After says when to try again */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postBoardsIdApprove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The board, no longer pending; a held re-enrolment (`reenroll_request`) is approved (approving a registered board with none changes nothing) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Board"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getProvisioningKeys: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of keys, newest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvisioningKeyList"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postProvisioningKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateProvisioningKey"];
            };
        };
        responses: {
            /** @description The key */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewProvisioningKey"];
                };
            };
            /** @description Bad input (`validation_failed`; an `expires_at` in the past) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteProvisioningKeysId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `provisioning_key_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDownloads: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The files */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DownloadList"];
                };
            };
        };
    };
    getDownloadsFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description `download_not_found`: not in MM_PACKAGES_DIR (the message says how to build it) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postBoardsIdAgentUpdate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["AgentUpdate"];
            };
        };
        responses: {
            /** @description The operation, succeeded: the board reconnected with the new version */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operation"];
                };
            };
            /** @description The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S) */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found`; `agent_version_not_found`: the control plane serves no agent package of that version */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The operation was cancelled */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The update failed (`update_rolled_back`, `agent_package_not_found`, `checksum_mismatch`, ...); the problem carries the operation */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_offline` */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getRollouts: {
        parameters: {
            query?: {
                status?: "running" | "paused" | "succeeded" | "failed" | "aborted" | "cancelled";
                kind?: string;
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of rollouts and the number of all matches */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RolloutList"];
                };
            };
            /** @description Bad filter (`validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postRollouts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RolloutCreate"];
            };
        };
        responses: {
            /** @description The rollout, its first phase started */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Rollout"];
                };
            };
            /** @description `validation_failed`, `no_matching_board`, `kind_not_supported` (`script_deploy` on a control plane without it) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A kind other than `execute` needs the admin role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `invocation_not_found`, `content_not_found` (`pac_install`: the archive is not stored), `agent_version_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getRolloutsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The rollout */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Rollout"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such rollout (problem+json, `rollout_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postRolloutsIdPause: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The rollout as it is now */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Rollout"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such rollout (problem+json, `rollout_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `rollout_not_running` or `rollout_finished` */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postRolloutsIdResume: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The rollout as it is now */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Rollout"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such rollout (problem+json, `rollout_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `rollout_not_paused` or `rollout_finished` */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postRolloutsIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The rollout as it is now */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Rollout"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such rollout (problem+json, `rollout_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `rollout_finished` */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getRolloutsIdBoardsBoardIdOutput: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
                board_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The video */
            200: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "video/mp4": string;
                };
            };
            /** @description A range of it */
            206: {
                headers: {
                    /** @description Strong entity tag of the file (its sha256, quoted) */
                    ETag?: string;
                    /** @description When the file was stored */
                    "Last-Modified"?: string;
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    /** @description `bytes <first>-<last>/<size>` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "video/mp4": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `rollout_not_found`, `board_not_in_rollout`, `output_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getRolloutsIdEvents: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description text/event-stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such rollout (problem+json, `rollout_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getReservations: {
        parameters: {
            query?: {
                board_id?: string;
                status?: "waiting" | "active" | "ended";
                /** @description `1`: only the caller's */
                mine?: "0" | "1";
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of reservations and the number of all matches */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReservationList"];
                };
            };
            /** @description Bad filter (`validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postReservations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReservationCreate"];
            };
        };
        responses: {
            /** @description The lease, in force now */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description The request, waiting its turn */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description `validation_failed` (both or neither of board_id and board_selector, duration_s over the maximum), `no_matching_board` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `already_reserved`: the caller holds that board already (renew instead) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getReservationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The reservation */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such reservation (problem+json, `reservation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteReservationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ended (or had ended already) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not the holder, nor an admin */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such reservation (problem+json, `reservation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postReservationsIdRenew: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReservationRenew"];
            };
        };
        responses: {
            /** @description The lease */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Reservation"];
                };
            };
            /** @description `validation_failed` (duration_s over MM_RESERVATION_MAX_S) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not the holder, nor an admin */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No such reservation (problem+json, `reservation_not_found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `reservation_not_active`: it waits or has ended */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBaselines: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
                /** @description Only the baselines of this invocation */
                invocation_id?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of baselines */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BaselineList"];
                };
            };
            /** @description Bad query */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postBaselines: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateBaseline"];
            };
        };
        responses: {
            /** @description The baseline */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Baseline"];
                };
            };
            /** @description `validation_failed`, or `operation_not_comparable` (not a succeeded execute with metrics, or runs of several invocations) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `operation_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `baseline_exists`: the name is taken */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getBaselinesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The baseline id, or its name */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The baseline */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Baseline"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `baseline_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteBaselinesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The baseline id, or its name */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `baseline_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postComparisons: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ComparisonRequest"];
            };
        };
        responses: {
            /** @description The comparison */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Comparison"];
                };
            };
            /** @description `validation_failed` (`operation_ids` or `rollout_id`, one of them), `operation_not_comparable` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `baseline_not_found`, `operation_not_found`, `rollout_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The body is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every subscription, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWebhook"];
            };
        };
        responses: {
            /** @description The subscription and its secret */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewWebhook"];
                };
            };
            /** @description `webhook_url_refused`: the URL is (or resolves to) a loopback, private, link-local or otherwise refused address (allowed with MM_WEBHOOK_ALLOW_PRIVATE=1); `validation_failed` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getWebhooksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The subscription */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `webhook_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteWebhooksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `webhook_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchWebhooksId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookPatch"];
            };
        };
        responses: {
            /** @description The subscription */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description `webhook_url_refused`: the URL is (or resolves to) a loopback, private, link-local or otherwise refused address (allowed with MM_WEBHOOK_ALLOW_PRIVATE=1); `validation_failed` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `webhook_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getWebhooksIdDeliveries: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
                status?: "pending" | "delivered" | "failed";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `webhook_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postWebhooksIdDeliveriesDeliveryIdRedeliver: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                delivery_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Pending again: the delivery */
            202: {
                headers: {
                    /** @description The operation (`/api/operations/<id>/`) */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `webhook_not_found`, `delivery_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getBoardsIdTerminal: {
        parameters: {
            query?: {
                /** @description The terminal's columns at the start (default 80); later sizes come as resize frames. */
                cols?: number;
                /** @description The terminal's rows at the start (default 24); later sizes come as resize frames. */
                rows?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching protocols: the terminal is open */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad size (`validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `reservation_required` (an operator not holding the board’s reservation), `terminal_disabled` (the board’s MM_TERMINAL=off), or `forbidden` (a viewer) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `upgrade_required`: not a WebSocket upgrade request */
            426: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `board_offline`: the board is not connected (to this replica) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getTerminalSessions: {
        parameters: {
            query?: {
                /** @description Only this board’s sessions */
                board_id?: string;
                /** @description At most this many (max 1000) */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The sessions */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TerminalSessionList"];
                };
            };
            /** @description Bad query (`validation_failed`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTerminalSessionsIdRecording: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The recording */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-asciicast": string;
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `terminal_session_not_found`, or `recording_not_ready` (the session still runs) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAuthLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Login"];
            };
        };
        responses: {
            /** @description Signed in */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user: components["schemas"]["User"];
                    };
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `invalid_credentials` */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `cross_origin`: the request came from another site */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `too_many_attempts`: wait Retry-After seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAuthTokenLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenLogin"];
            };
        };
        responses: {
            /** @description Signed in */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `invalid_credentials` */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `cross_origin`: the request came from another site */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `too_many_attempts`: wait Retry-After seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAuthLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The session has ended */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `unauthorized` */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postAuthPassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChangePassword"];
            };
        };
        responses: {
            /** @description Changed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `validation_failed`: the new password is empty, too short (8 characters at least) or your user name */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `invalid_credentials`: the current password is wrong (or `unauthorized`: not signed in) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `user_required`: MM_API_TOKEN (or a server with auth off) has no password to change */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `too_many_attempts`: wait Retry-After seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getAuthMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description `unauthorized` */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUsers: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of users, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserList"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateUser"];
            };
        };
        responses: {
            /** @description The user (and a generated password, once) */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewUser"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `username_taken` */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUsersId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The user */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `user_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteUsersId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `user_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `last_admin`: the last admin cannot be deleted or demoted */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUsersId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateUser"];
            };
        };
        responses: {
            /** @description The user */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `user_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description `last_admin`: the last admin cannot be deleted or demoted */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getTokens: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
                /** @description Another user's tokens (admin only; your own id needs no role) */
                user_id?: string;
                /** @description `1`: every user's tokens (admin only) */
                all?: "1" | "true";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of tokens, newest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenList"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `forbidden`: another user's tokens, or everyone's, need the admin role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateToken"];
            };
        };
        responses: {
            /** @description The token */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewToken"];
                };
            };
            /** @description Bad input (`validation_failed`; an `expires_at` in the past) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `user_required`: MM_API_TOKEN (or a server with auth off) has no user to own tokens */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteTokensId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description `token_not_found` */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getAudit: {
        parameters: {
            query?: {
                /** @description Page size (max 1000). */
                limit?: number;
                offset?: number;
                /** @description Only this username */
                user?: string;
                /** @description Only this action (e.g. `auth.login_failed`) */
                action?: string;
                /** @description Only events at or after this time (ISO 8601) */
                since?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events; `total` counts every event matching the filters */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditEventList"];
                };
            };
            /** @description Bad input */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        status: number;
                        code: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getAuditActions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The actions */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditActions"];
                };
            };
            /** @description Missing or wrong credentials (`unauthorized`) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Role too low (`forbidden`) or a cross-site request (`cross_origin`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
