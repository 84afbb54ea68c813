import { LinkFeature, systemClock, type AcceleratorFacts, type Clock, type MessageOf, type TimerHandle } from '@mm/protocol';
import type { ControlPlaneLink } from '../link/control-plane-link.ts';
import type { Logger } from '../logger.ts';
import { factsChanged, type BoardFacts, type BoardFactsCollector } from './board-facts.ts';

/** How often facts are looked at again without a reason (a PAC switched by hand, a disk filling). */
const RECHECK_MS = 5 * 60_000;

/**
 * Keeps the control plane's copy of the board's facts current: the hello carries them, and
 * after whatever may change them (an RPC such as a PAC activation, an operation, or every
 * few minutes) they are read again and sent as `board.facts` if anything but free disk
 * changed, to a server whose welcome names the `board.facts` feature.
 */
export class FactsReporter {
  private sent: BoardFacts | undefined;
  /** The accelerator facts as last collected (re-collected only when asked: the tools take a while), and as sent. */
  private accelerator: AcceleratorFacts | undefined;
  private sentAccelerator = 'null';
  private connection: ControlPlaneLink | undefined;
  private checking: Promise<void> = Promise.resolve();
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly collector: BoardFactsCollector,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
    /** The board's accelerator (accelerator/accelerator-tools.ts), where the agent has the tools configured. */
    private readonly collectAccelerator?: () => Promise<AcceleratorFacts | undefined>,
  ) {}

  /** The accelerator facts for a hello, collected afresh (undefined: no tools, or they failed). */
  async acceleratorForHello(): Promise<AcceleratorFacts | undefined> {
    await this.refreshAccelerator();
    return this.accelerator;
  }

  private async refreshAccelerator(): Promise<void> {
    if (!this.collectAccelerator) return;
    try {
      this.accelerator = await this.collectAccelerator();
    } catch (err) {
      this.log.warn({ err }, 'could not collect the accelerator facts');
    }
  }

  /** The facts for a hello (remembered as what the server has, once it welcomes). */
  async forHello(): Promise<BoardFacts | undefined> {
    try {
      return await this.collector.collect();
    } catch (err) {
      this.log.warn({ err }, 'could not collect the board facts');
      return undefined;
    }
  }

  onReady(connection: ControlPlaneLink, welcome: MessageOf<'welcome'>, hello: MessageOf<'hello'>): void {
    this.sent = hello.facts;
    this.sentAccelerator = JSON.stringify(hello.accelerator ?? null);
    this.connection = welcome.features?.includes(LinkFeature.boardFacts) ? connection : undefined;
    this.schedule();
  }

  /**
   * Something happened that may have changed the facts: look again (one look at a time).
   * `accelerator`: the accelerator too (after an app or PAC change; its tools are slow to ask).
   */
  recheck(opts: { accelerator?: boolean } = {}): Promise<void> {
    this.checking = this.checking.then(() => this.check(opts.accelerator === true));
    return this.checking;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => void this.recheck({ accelerator: true }).finally(() => this.schedule()), RECHECK_MS);
    this.timer.unref();
  }

  private async check(withAccelerator: boolean): Promise<void> {
    const conn = this.connection;
    if (!conn?.isReady || this.stopped) return;
    const facts = await this.forHello();
    if (withAccelerator) await this.refreshAccelerator();
    const accelerator = JSON.stringify(this.accelerator ?? null);
    if (!facts || (!factsChanged(this.sent, facts) && accelerator === this.sentAccelerator)) return;
    if (conn.sendMessage({ type: 'board.facts', facts, ...(this.accelerator ? { accelerator: this.accelerator } : {}) })) {
      this.log.info({ active_pac: facts.active_pac, agent_version: facts.agent_version, app: this.accelerator?.apps.find((a) => a.active)?.name ?? null }, 'board facts changed: sent');
      this.sent = facts;
      this.sentAccelerator = accelerator;
    }
  }
}
