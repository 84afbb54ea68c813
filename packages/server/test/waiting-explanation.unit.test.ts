import { describe, expect, it } from 'vitest';
import { explain } from '../src/fleet/waiting-explanation.ts';
import { nearestLabel } from '../../api-client/src/labels.ts';

const board = (s: Partial<{ online: boolean; maintenance: boolean; bad: boolean; reserved: boolean; busy: boolean }>) => ({ online: true, maintenance: false, bad: false, reserved: false, busy: false, ...s });

describe('why selector work waits', () => {
  it('counts the matching boards by what keeps each, in one sentence', () => {
    const at = new Date('2026-11-28T10:00:00Z');
    const w = explain({ site: 'lab-1' }, [board({ online: false }), board({ maintenance: true }), board({ maintenance: true, bad: true })], at);
    expect(w).toEqual({ reason: '3 boards match: 1 offline, 2 in maintenance.', matching: 3, online: 2, idle: 0, maintenance: 2, bad: 1, reserved: 0, gives_up_at: '2026-11-28T10:00:00.000Z' });
    expect(explain({ site: 'lab-1' }, [board({ busy: true })], null).reason).toBe('1 board matches: 1 busy.');
    expect(explain({ site: 'lab-9' }, [], null).reason).toBe('No board matches site=lab-9.');
  });

  it('counts boards reserved by someone else, and never as idle', () => {
    const w = explain({ lab: 'x' }, [board({ reserved: true }), board({ reserved: true, busy: true }), board({ online: false, reserved: true }), board({})], null);
    expect(w).toMatchObject({ reason: '4 boards match: 1 offline, 2 reserved by someone else, 1 idle (about to take it).', matching: 4, online: 3, idle: 1, reserved: 3 });
  });

  it('suggests the nearest label some board holds', () => {
    const boards: Array<Record<string, string>> = [{ site: 'lab-1', 'mm/arch': 'arm64' }, { site: 'lab-2' }];
    expect(nearestLabel({ sit: 'lab-1' }, boards)).toBe('site=lab-1');
    expect(nearestLabel({ site: 'lab-9' }, boards)).toMatch(/^site=lab-[12]$/);
    expect(nearestLabel({ colour: 'purple' }, boards)).toBeUndefined();
  });
});
