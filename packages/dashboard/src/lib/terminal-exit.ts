/** The server's last text frame (docs/terminal.md). */
export interface TerminalExit {
  type: 'exit';
  code: number | null;
  reason?: string;
  message?: string;
}

/** How a session ended, in words (the server's own message where it sends one). */
export function exitText(exit: TerminalExit): string {
  if (exit.reason === 'exited' || (exit.reason === undefined && exit.code !== null)) return `The shell exited with status ${exit.code ?? 'unknown'}.`;
  if (exit.message) return exit.message;
  switch (exit.reason) {
    case 'board_rebooting':
      return 'The board is rebooting (a PAC activation): the session ended. Open a new one once the board is back.';
    case 'idle_timeout':
      return 'The session was idle too long and ended.';
    case 'link_lost':
      return 'The board’s link dropped or moved to another server replica: open the session again.';
    case 'agent_stopping':
      return 'The board’s agent was stopped.';
    case 'server_stopping':
      return 'The server is shutting down: open the session again.';
    case 'pty_failed':
      return 'The board could not start a shell (no python3, no such user, or no login shell).';
    default:
      return `The session ended (${exit.reason ?? 'no reason given'}).`;
  }
}
