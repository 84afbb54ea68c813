import type { AcceleratorFacts, BoardFacts } from '@mm/protocol';
import { acceleratorLabels, withAccelerator } from './accelerator-labels.ts';

/**
 * The agent's facts about its board and the read-only `mm/` labels derived from them
 * (docs/fleet-facts.md). Label values must be at most 63 printable ASCII characters
 * (board-selector.ts): values are made so, kept readable, and easy to type in a selector.
 */

export type Facts = Record<string, unknown>;

const MAX_VALUE = 63;

/**
 * Any text as a label value: accents dropped, lowercase; every run of characters other than
 * `a-z 0-9 . _ + -` becomes one `-`; no `-` at either end; at most 63 characters.
 * "Ubuntu 22.04.4 LTS" → "ubuntu-22.04.4-lts". Empty → undefined (no label).
 */
export function labelValue(text: string): string | undefined {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents go, their letters stay
    .toLowerCase()
    .replace(/[^a-z0-9._+-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_VALUE)
    .replace(/-+$/, '');
  return slug || undefined;
}

/** Short names of AMD/Xilinx boards found in a model string (a Kria SOM on its own is `k26`). */
const KNOWN_BOARDS: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]> = [
  [/\b(kv260|kr260|kd240)\b/i, (m) => m[1]!.toLowerCase()],
  [/\bSCK-(KV|KR|KD)-G\b/i, (m) => ({ kv: 'kv260', kr: 'kr260', kd: 'kd240' })[m[1]!.toLowerCase() as 'kv' | 'kr' | 'kd']],
  [/\b(zcu\d{3}|zc\d{3}|vck\d{3}|vek\d{3}|vmk\d{3}|vpk\d{3}|ultra96(?:-?v2)?|pynq-?z[12]|zedboard)\b/i, (m) => m[1]!.toLowerCase().replace(/-/g, '')],
  [/\bK26\b/i, () => 'k26'],
];

/**
 * `mm/board-model`: the board's short name where it is a known AMD/Xilinx board
 * ("ZynqMP ZCU104 RevC" → `zcu104`, "Kria KV260 Vision AI Starter Kit" → `kv260`),
 * otherwise the model as a label value ("Raspberry Pi 4 Model B Rev 1.4" → `raspberry-pi-4-model-b-rev-1.4`).
 */
export function boardModelLabel(model: string): string | undefined {
  for (const [pattern, name] of KNOWN_BOARDS) {
    const m = pattern.exec(model);
    if (m) return name(m);
  }
  return labelValue(model);
}

/** `mm/os`: os-release's `ID-VERSION_ID` (`ubuntu-22.04`), else the OS name as a label value. */
function osLabel(facts: Facts): string | undefined {
  const id = typeof facts.os_id === 'string' ? facts.os_id : undefined;
  const version = typeof facts.os_version_id === 'string' ? facts.os_version_id : undefined;
  if (id) return labelValue(version ? `${id}-${version}` : id);
  return typeof facts.os === 'string' ? labelValue(facts.os) : undefined;
}

/** Values that are names already (a PAC's, a version): only made valid, not lowercased. */
function nameValue(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const v = text.replace(/[^\x21-\x7e]+/g, '-').replace(/^-+|-+$/g, '').slice(0, MAX_VALUE);
  return v || undefined;
}

/** The read-only `mm/` labels the facts give (a fact that is missing gives no label). */
export function agentLabelsFromFacts(facts: Facts): Record<string, string> {
  const labels: Record<string, string | undefined> = {
    'mm/arch': typeof facts.arch === 'string' ? labelValue(facts.arch) : undefined,
    'mm/os': osLabel(facts),
    'mm/board-model': typeof facts.board_model === 'string' ? boardModelLabel(facts.board_model) : undefined,
    'mm/active-pac': nameValue(facts.active_pac),
    'mm/agent-version': nameValue(facts.agent_version),
    // mm/dpu-arch, mm/dpu-fingerprint, mm/app, mm/vai-version (docs/accelerators.md).
    ...acceleratorLabels(facts),
  };
  return Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Node's arch names as Debian calls them (what agents with facts report). */
const DEBIAN_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'armhf', ia32: 'i386' };

/**
 * The facts of a hello: the agent's own (feature `board.facts`), or, from an older agent,
 * what its hello says anyway (arch, agent version, active PAC, host name).
 */
export function factsOfHello(hello: { facts?: BoardFacts | undefined; accelerator?: AcceleratorFacts | undefined; arch: string; agent_version: string; active_pac: string | null; hostname: string }): Facts {
  if (hello.facts) return withAccelerator({ ...hello.facts }, hello.accelerator);
  return { arch: DEBIAN_ARCH[hello.arch] ?? hello.arch, agent_version: hello.agent_version, active_pac: hello.active_pac, hostname: hello.hostname };
}
