import { z } from 'zod';
import { ScriptPort, ScriptState, Sha256 } from './messages.ts';
import { AppList, DpuFacts } from './accelerator.ts';

/** One PAC configuration as `xlnx-config -q` lists it (docs/api.md, "PACs"). */
export const PacRecord = z.object({
  name: z.string().min(1),
  active: z.boolean(),
  board: z.string(),
  assets_dir: z.string(),
});
export type PacRecord = z.infer<typeof PacRecord>;

/** The board's PACs and the active one's name (null when none is active). */
const PacList = z.object({ pacs: z.array(PacRecord), active: z.string().nullable() });

/**
 * The methods the server may call on the agent with rpc.request, each with the schema of
 * its params and of its result. Both sides check both: the agent its params, the server
 * the result. Add a method here, then its handler in the agent's rpc registry.
 */
export const rpcMethods = {
  /** Liveness and clock check; answers the agent's view of itself. */
  'agent.info': {
    params: z.object({}),
    // `arch` (Debian's name: arm64, amd64): which agent package fits the board. Optional, so
    // agents from before it still answer.
    // `scripts_root` (MM_SCRIPTS_ROOT): where device scripts may be written; absent from older agents.
    result: z.object({ agent_version: z.string(), boot_id: z.string(), uptime_s: z.number(), arch: z.string().optional(), scripts_root: z.string().optional() }),
  },
  /**
   * An agent update (docs/packages.md): the agent pulls the package (stream.pull, source
   * `{ kind: 'upload', upload_id }`), checks its sha256, unpacks it beside the running
   * version, writes the trial file (the start script's watchdog rolls back unless the new
   * version reconnects within `confirm_within_s`), switches, answers, then restarts.
   */
  'agent.update': {
    params: z.object({ upload_id: z.string().min(1), version: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/), confirm_within_s: z.number().int().positive() }),
    result: z.object({ accepted: z.literal(true), previous_version: z.string() }),
  },
  /** Runs `xlnx-config -q` and answers its parsed table. */
  'pac.query': {
    params: z.object({}),
    result: PacList,
  },
  /** Runs `xlnx-config -a <pac>`; answers its output. Does not reboot (see board.reboot). */
  'pac.activate': {
    params: z.object({ pac: z.string().min(1) }),
    result: z.object({ output: z.string() }),
  },
  /**
   * The agent pulls the archive (stream.pull, source `{ kind: 'upload', upload_id }`),
   * extracts it safely into MM_PAC_DIR/<folder>, then queries again.
   */
  'pac.install': {
    params: z.object({ upload_id: z.string().min(1) }),
    result: PacList.extend({ pac: z.string().min(1) }),
  },
  /**
   * Deploys a device script's program (docs/device-scripts.md): the agent takes it from its
   * cache or pulls it (source `{ kind: 'upload', upload_id }`), checks the sha256, refuses a
   * `remote_dir` outside MM_SCRIPTS_ROOT (`script_dir_refused`, nothing written), writes
   * `remote_dir/filename`, (re)starts it supervised with PORT set and waits until the port
   * answers; if it does not within `health_timeout_s`, the previous version comes back
   * (files and process) and the call fails `script_unhealthy`. With `stable_s`, it must then
   * stay up that long (no exit, no restart by the supervisor), else the same rollback and
   * `script_unstable` (older agents ignore `stable_s`).
   */
  'script.deploy': {
    params: z.object({
      script_id: z.string().min(1),
      name: z.string(),
      version: z.string().min(1),
      filename: z.string().min(1),
      remote_dir: z.string().min(1),
      port: ScriptPort,
      sha256: Sha256,
      size: z.number().int().nonnegative(),
      upload_id: z.string().min(1),
      health_timeout_s: z.number().positive(),
      stable_s: z.number().nonnegative().optional(),
    }),
    result: z.object({ script: ScriptState, path: z.string(), pulled: z.boolean(), previous_version: z.string().nullable() }),
  },
  /** Starts, stops or restarts a deployed script (start/restart wait for its port, as deploy does). */
  'script.control': {
    params: z.object({ script_id: z.string().min(1), action: z.enum(['start', 'stop', 'restart']), health_timeout_s: z.number().positive(), stable_s: z.number().nonnegative().optional() }),
    result: z.object({ script: ScriptState }),
  },
  /** The script's recent output (a bounded buffer on the agent). */
  'script.logs': {
    params: z.object({ script_id: z.string().min(1) }),
    result: z.object({ text: z.string() }),
  },
  /** Lists the accelerated applications (`dfx-mgr-client -listPackage`, else `xmutil listapps`) and the board's accelerator facts. */
  'app.query': {
    params: z.object({}),
    result: AppList,
  },
  /**
   * Makes `app` the active application (docs/accelerators.md): refuses a name the listing
   * does not show (`app_not_found`), unloads what holds the slot, loads it (a load still
   * running after the agent's MM_APP_LOAD_TIMEOUT_S is killed: `app_load_timeout`), and
   * verifies by the listing (the app in an active slot), by `xdputil` (the DPU answers) and
   * by /etc/vart.conf; never by the tools' exit status. Failures: `no_empty_slot`,
   * `app_load_failed`, each with the tools' output. `loaded` is false when it was active already.
   */
  'app.load': {
    params: z.object({ app: z.string().min(1).max(200) }),
    result: AppList.extend({
      app: z.string(),
      loaded: z.boolean(),
      slot: z.number().int().nonnegative(),
      /** The apps unloaded to free the slot. */
      unloaded: z.array(z.string()),
      dpu: DpuFacts.nullable(),
      vart_target: z.string().nullable(),
      /** What the tools printed, in order. */
      output: z.string(),
    }),
  },
  /** Unloads the active application(s); verified by the listing. */
  'app.unload': {
    params: z.object({}),
    result: AppList.extend({ unloaded: z.array(z.string()), output: z.string() }),
  },
  /**
   * The agent pulls the archive (stream.pull, source `{ kind: 'upload', upload_id }`: a tar,
   * tar.gz or zip of one app folder), checks it as strictly as a PAC archive (refused:
   * `invalid_app_archive`), installs it atomically under MM_APPS_DIR and lists again.
   */
  'app.install': {
    params: z.object({ upload_id: z.string().min(1) }),
    result: AppList.extend({
      app: z.string(),
      files: z.number().int().nonnegative(),
      bytes: z.number().int().nonnegative(),
      shell_type: z.string(),
      /** Whether the listing shows it (dfx-mgrd notices new folders by itself, within seconds). */
      listed: z.boolean(),
      replaced: z.boolean(),
    }),
  },
  /**
   * A lab host (an agent with MM_PDUDAEMON_URL, docs/power.md) relays a power command for
   * another board to its pdudaemon: `GET <url>/power/control/<action>?hostname=&port=`
   * (`delay` for reboot: seconds off). Answers pdudaemon's HTTP status and body; fails
   * `not_lab_host` (no MM_PDUDAEMON_URL), `pdu_unreachable` or `pdu_error` (its answer).
   */
  'power.control': {
    params: z.object({
      action: z.enum(['on', 'off', 'reboot']),
      hostname: z.string().min(1).max(255),
      port: z.number().int().min(0).max(65535),
      delay_s: z.number().int().min(0).max(3600).optional(),
    }),
    result: z.object({ status: z.number().int(), body: z.string() }),
  },
  /** The agent answers first, then runs its reboot command (MM_REBOOT). */
  'board.reboot': {
    params: z.object({}),
    result: z.object({ accepted: z.literal(true) }),
  },
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type RpcMethod = keyof typeof rpcMethods;
export type RpcParams<M extends RpcMethod> = z.infer<(typeof rpcMethods)[M]['params']>;
export type RpcResult<M extends RpcMethod> = z.infer<(typeof rpcMethods)[M]['result']>;
