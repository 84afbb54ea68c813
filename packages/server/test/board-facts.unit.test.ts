import { describe, expect, it } from 'vitest';
import { BoardSelectorSchema } from '../src/boards/board-selector.ts';
import { agentLabelsFromFacts, boardModelLabel, factsOfHello, labelValue } from '../src/boards/board-facts.ts';

describe('mm/ labels from board facts', () => {
  it('makes every label of a KV260 and a ZCU104', () => {
    expect(
      agentLabelsFromFacts({
        arch: 'arm64',
        os: 'Ubuntu 22.04.4 LTS',
        os_id: 'ubuntu',
        os_version_id: '22.04',
        board_model: 'Kria KV260 Vision AI Starter Kit',
        active_pac: 'kv260-smartcam',
        agent_version: '0.4.1',
      }),
    ).toEqual({ 'mm/arch': 'arm64', 'mm/os': 'ubuntu-22.04', 'mm/board-model': 'kv260', 'mm/active-pac': 'kv260-smartcam', 'mm/agent-version': '0.4.1' });
    expect(agentLabelsFromFacts({ arch: 'arm64', os: 'PetaLinux 2023.2', board_model: 'ZynqMP ZCU104 RevC', active_pac: null })).toEqual({
      'mm/arch': 'arm64',
      'mm/os': 'petalinux-2023.2',
      'mm/board-model': 'zcu104',
    });
  });

  it('knows the AMD/Xilinx boards by their short names', () => {
    expect(boardModelLabel('Xilinx ZCU104 RevC')).toBe('zcu104');
    expect(boardModelLabel('ZynqMP ZCU102 Rev1.0')).toBe('zcu102');
    expect(boardModelLabel('SCK-KR-G')).toBe('kr260');
    expect(boardModelLabel('ZynqMP SMK-K26 Rev1/B/A')).toBe('k26');
    expect(boardModelLabel('Avnet Ultra96-V2 Rev1')).toBe('ultra96v2');
    expect(boardModelLabel('Raspberry Pi 4 Model B Rev 1.4')).toBe('raspberry-pi-4-model-b-rev-1.4');
  });

  it('label values are valid selector values: ≤ 63 printable characters, none empty', () => {
    expect(labelValue('  Ünïcode / spaces\tand\nnewlines  ')).toBe('unicode-spaces-and-newlines');
    expect(labelValue('!!!')).toBeUndefined();
    const long = labelValue('x'.repeat(200));
    expect(long).toHaveLength(63);
    const labels = agentLabelsFromFacts({ board_model: 'é'.repeat(80) + ' Board '.repeat(20), active_pac: 'pac with spaces\u0000and a NUL', agent_version: 'v'.repeat(100), os: '' });
    expect(labels['mm/active-pac']).toBe('pac-with-spaces-and-a-NUL');
    expect(labels['mm/agent-version']).toHaveLength(63);
    expect(labels['mm/os']).toBeUndefined();
    expect(BoardSelectorSchema.safeParse(labels).success).toBe(true);
  });

  it("an older agent's hello (no facts) still gives arch, agent version and active PAC", () => {
    const facts = factsOfHello({ arch: 'x64', agent_version: '0.1.0', active_pac: 'base', hostname: 'b1' });
    expect(facts).toEqual({ arch: 'amd64', agent_version: '0.1.0', active_pac: 'base', hostname: 'b1' });
    expect(agentLabelsFromFacts(facts)).toEqual({ 'mm/arch': 'amd64', 'mm/agent-version': '0.1.0', 'mm/active-pac': 'base' });
  });
});
