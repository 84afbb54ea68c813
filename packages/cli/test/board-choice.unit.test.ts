/**
 * `--board <value>` never picks a board on a guess (issue 46, hole 10): a board named with
 * the start of another board's id must not win over that board, nor lose to it silently.
 */
import { describe, expect, it } from 'vitest';
import type { Board } from '../src/api.ts';
import { pickBoard } from '../src/board-choice.ts';
import { UsageError } from '../src/errors.ts';

const board = (id: string, name: string) => ({ id, name, status: 'online' }) as Board;

const victim = board('3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6b', 'lab-kria-07');
const impostor = board('9d8c7b6a-5f4e-4d3c-9b2a-0f1e2d3c4b5a', '3f2a9c1e');
const other = board('3f2b0000-0000-4000-8000-000000000000', 'lab-kria-08');

describe('pickBoard', () => {
  it('refuses a value that is a name and also the start of another id, listing both', () => {
    let error: unknown;
    try {
      pickBoard([victim, impostor, other], '3f2a9c1e');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).toContain(victim.id);
    expect(message).toContain(impostor.id);
    expect(message).toMatch(/ambiguous|several/i);
    expect(message).not.toContain(other.id);
  });

  it('refuses a name that matches another board\'s id start in another case too', () => {
    expect(() => pickBoard([victim, board('11111111-1111-4111-8111-111111111111', '3F2A9C1E')], '3f2a9c1e')).toThrow(UsageError);
  });

  it('takes a whole id as that id (what the server itself takes), whatever a board is named', () => {
    const namedLikeIt = board('22222222-2222-4222-8222-222222222222', victim.id);
    expect(pickBoard([namedLikeIt, victim], victim.id)).toBe(victim);
  });

  it('still picks by an id, a name or an id prefix when only one board answers to it', () => {
    const boards = [victim, impostor, other];
    expect(pickBoard(boards, victim.id)).toBe(victim);
    expect(pickBoard(boards, 'lab-kria-08')).toBe(other);
    expect(pickBoard(boards, '9d8c7b6a')).toBe(impostor);
    expect(pickBoard(boards, '3f2b')).toBe(other);
    expect(() => pickBoard(boards, '3f2')).toThrow(UsageError);
    expect(() => pickBoard(boards, 'nobody')).toThrow(UsageError);
  });
});
