import type { BoardDriver } from '../board/board-driver.ts';
import type { AgentConfig } from '../config.ts';
import type { Logger } from '../logger.ts';
import { SimulatedBoard } from './simulated-board.ts';
import { simulatedSensors } from './simulated-sensors.ts';
import { simulatedBoardSize } from './simulated-host-tree.ts';
import { readSimulatedFpga } from './fpgautil/index.ts';

/**
 * `mm-agent --simulate`'s board: the simulated runner, xlnx-config and PAC folder (the
 * config's defaults come from `simulatedDefaults`), the simulated board's boot id and
 * GPIO script, and a reboot that the agent process lives through. Starts the board.
 */
export async function startSimulatedBoardDriver(config: AgentConfig, log: Logger): Promise<BoardDriver & { board: SimulatedBoard }> {
  if (!config.runner) throw new Error('no runner command (the simulated board brings one)');
  const board = new SimulatedBoard({
    agentDir: config.agentDir,
    bootIdFile: config.bootIdFile,
    pacDir: config.pacDir,
    log: log.child({ component: 'simulated-board' }),
    ...(config.simulatedGpioPort !== undefined ? { motorPort: config.simulatedGpioPort } : {}),
    ...(config.simulatedReboot ? { reboot: config.simulatedReboot } : {}),
    model: config.simulatedBoardModel,
  });
  await board.start();
  return {
    board,
    platform: `${process.platform} (simulated board)`,
    bootIdFile: board.bootIdFile,
    runner: config.runner,
    xlnxConfig: config.xlnxConfig,
    pacDir: config.pacDir,
    commandEnv: board.commandEnv,
    sensors: simulatedSensors(undefined, undefined, simulatedBoardSize(config.simulatedBoardModel ?? 'zcu104')),
    // mm-runner reads the simulated INA260 and AMS sensors (which the DPU stand-in drives) here.
    // MM_SIM_AGENT_PID: a run told to hang the board (`hang` in its parameters) stops this process.
    runnerEnv: { MM_HWMON_ROOT: board.hwmonRoot, MM_SIM_AGENT_PID: String(process.pid) },
    acceleratorState: {
      current: async () => {
        const fpga = await readSimulatedFpga(board.dir);
        return fpga?.bitstream ? { kind: 'bitstream', bitstream: fpga.bitstream, overlay: fpga.overlay } : undefined;
      },
    },
    // MM_HOST_ROOT, when set, wins over the simulated board's own tree (tests vary it).
    factsRoot: config.hostRoot !== '/' ? config.hostRoot : board.hostRoot,
    reboot: async () => board.rebootSoon(0),
    scriptPorts: () => (board.motorUrl ? [Number(new URL(board.motorUrl).port)] : []),
    onAgentReboot: (hook) => {
      board.onReboot = () => hook(board.rebootDownMs);
    },
    stop: () => board.stop(),
  };
}
