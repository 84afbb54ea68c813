export interface CliOptions {
  simulate: boolean;
  help: boolean;
  version: boolean;
}

export const HELP_TEXT = `mm-agent: the Model Manager board agent

Usage: mm-agent [--simulate] [--version] [--help]

Keeps one WebSocket open to the control plane, receives files into its cache, runs
invocations and PAC commands, and sends output videos back.

Options:
  --simulate   stand in a simulated board (runner, xlnx-config, reboot, GPIO), for laptops and tests
  --version    print the agent's version and exit
  --help       print this help and exit

Settings (environment):
  MM_SERVER_URL              the control plane (default http://127.0.0.1:8000)
  MM_BOARD_TOKEN             the board's token (required, or MM_BOARD_TOKEN_FILE)
  MM_BOARD_TOKEN_FILE        a file holding the board's token (keeps it out of the environment)
  MM_PROVISIONING_KEY        with no token in MM_BOARD_TOKEN_FILE yet: enroll with this key, keep the token there
  MM_MACHINE_ID_FILE         the board's stable id for enrolling (default /etc/machine-id)
  MM_AGENT_DIR               cache, work folders, journal (default /var/lib/mm-agent; ./data/agent with --simulate)
  MM_RUNNER                  the command that runs an invocation (default mm-runner, the runner for Vitis AI models)
  MM_PYTHON                  the Python 3 mm-runner runs with (default python3; needs numpy, OpenCV, xir/vart)
  MM_FPGAUTIL                loads an mm-runner run's bitstream (default fpgautil)
  MM_RUN_TIMEOUT_S           how long a run may take (default 3600)
  MM_RUNNER_USER             run the runner as this user (as root: its uid/gid; otherwise sudo -n -u USER)
  MM_SCRIPT_PORTS            loopback ports the device-script relay may reach (default 8765)
  MM_SCRIPTS_ROOT            device scripts are written only inside this folder
                             (default /opt/model-manager/device-scripts; kept in MM_AGENT_DIR with --simulate)
  MM_CACHE_MAX_BYTES         size cap of the cache (default 20 GiB)
  MM_XLNX_CONFIG             the xlnx-config executable (default xlnx-config)
  MM_REBOOT                  the reboot command (default systemctl reboot)
  MM_PAC_DIR                 where PACs are installed (default /boot/firmware/xlnx-config)
  MM_HEARTBEAT_INTERVAL_MS   ping interval (default 15000)
  MM_HEARTBEAT_TIMEOUT_MS    a link silent this long is closed (default 45000)
  MM_RECONNECT_MAX_DELAY_MS  cap of the reconnect backoff (default 30000)
  MM_BOOT_ID_FILE            the boot id (default /proc/sys/kernel/random/boot_id)
  MM_TELEMETRY_INTERVAL_S    how often the board's telemetry (temperatures, power, memory, load, disk) is sent (default 30)
  MM_LINK_COMPRESSION        compressed file streams: 1 when faster (default), always, or 0
  MM_HOST_ROOT               where /proc, /sys and /etc are read for the board's facts and telemetry (default /)
  MM_SIM_BOARD_MODEL         --simulate: the board it stands in for, zcu104 (default) or kv260
  MM_XMUTIL                  the xmutil command line (default xmutil; e.g. sudo -n /usr/bin/xmutil)
  MM_DFX_MGR_CLIENT          the dfx-mgr-client command line (default dfx-mgr-client)
  MM_XDPUTIL                 the xdputil command line (default xdputil)
  MM_APPS_DIR                where accelerated applications live (default /lib/firmware/xilinx)
  MM_APP_LOAD_TIMEOUT_S      an app load or unload still running after this long is killed (default 60)
  MM_SIM_GPIO_PORT           --simulate: the GPIO motor script's port (default 8765, its catalogue entry's; 0 = any free)
  MM_SIM_REBOOT_DELAY_MS     --simulate: how long a reboot keeps the board off the link (default 3000)
  MM_SIM_REBOOT_NEVER_RETURN --simulate: 1 = after a reboot the board never comes back (tests)
  MM_SIM_REBOOT_SAME_BOOT_ID --simulate: 1 = the board comes back with its old boot id (tests)
  MM_SIM_REBOOT_FALLBACK     --simulate: 1 = the board comes back with the PAC it booted with before (tests)
  MM_TERMINAL                on or off: whether the board gives terminals (default on)
  MM_TERMINAL_USER           the user a terminal's login shell runs as (default the agent's own; root only if named)
  MM_TERMINAL_IDLE_S         a terminal with no bytes either way this long ends (default 900)
  MM_PDUDAEMON_URL           this agent is a lab host: it relays power commands to this pdudaemon (e.g. http://127.0.0.1:16421)
  MM_TERMINAL_SHELL          the shell a terminal runs (default the user's login shell)
  LOG_LEVEL                  trace, debug, info, warn, error, fatal or silent (default info)
`;

export class CliError extends Error {
  override name = 'CliError';
}

export function parseCli(args: readonly string[]): CliOptions {
  const opts: CliOptions = { simulate: false, help: false, version: false };
  for (const arg of args) {
    if (arg === '--simulate') opts.simulate = true;
    else if (arg === '--help' || arg === '-h') opts.help = true;
    else if (arg === '--version' || arg === '-v') opts.version = true;
    else throw new CliError(`unknown argument ${JSON.stringify(arg)} (see --help)`);
  }
  return opts;
}
