import { inArray } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { apiTokens, boards, deviceScripts, invocations, users } from '../db/schema.ts';

/**
 * Names beside the ids of audit entries: whom a target means (a board's, invocation's,
 * device script's, user's or token's name) and the acting user's current name. Looked up
 * when the log is read, so a renamed thing shows its name of today; a deleted one falls
 * back to the name its entry recorded (`detail.name` / `detail.username`), else null.
 */
type TargetKind = 'invocation' | 'board' | 'device_script' | 'user' | 'token';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** How targets name things: `<kind> <id>` (set by routes) or the request path the entry was made for. */
const TARGET_PATTERNS: Array<[TargetKind, RegExp]> = [
  ['invocation', /^invocation (\d+)$/],
  ['invocation', /^\/api\/invocations\/(\d+)\//],
  ['board', new RegExp(`^board (${UUID})$`, 'i')],
  ['board', new RegExp(`^/api/boards/(${UUID})/`, 'i')],
  ['device_script', new RegExp(`^device_script (${UUID})$`, 'i')],
  ['device_script', new RegExp(`^/api/device-scripts/(${UUID})/`, 'i')],
  ['user', new RegExp(`^user (${UUID})$`, 'i')],
  ['user', new RegExp(`^/api/users/(${UUID})/`, 'i')],
  ['token', new RegExp(`^token (${UUID})$`, 'i')],
];

export interface TargetRef {
  kind: TargetKind;
  id: string;
}

/** What a target string refers to, or undefined when it names nothing with a name. */
export function parseTarget(target: string | null): TargetRef | undefined {
  if (!target) return undefined;
  for (const [kind, pattern] of TARGET_PATTERNS) {
    const m = pattern.exec(target);
    if (m?.[1]) return { kind, id: m[1].toLowerCase() };
  }
  return undefined;
}

const refKey = (r: TargetRef) => `${r.kind} ${r.id}`;

/** Looks up the names of these things (one query per kind present); keys are `<kind> <id>`. */
export async function lookupNames(db: Db, refs: TargetRef[]): Promise<Map<string, string>> {
  const ids = (kind: TargetKind) => [...new Set(refs.filter((r) => r.kind === kind).map((r) => r.id))];
  const names = new Map<string, string>();
  const put = (kind: TargetKind, rows: Array<{ id: string | number; name: string }>) => {
    for (const r of rows) names.set(`${kind} ${String(r.id).toLowerCase()}`, r.name);
  };
  const invocationIds = ids('invocation').map(Number).filter((n) => Number.isSafeInteger(n) && n <= 2_147_483_647);
  if (invocationIds.length) put('invocation', await db.select({ id: invocations.id, name: invocations.name }).from(invocations).where(inArray(invocations.id, invocationIds)));
  const boardIds = ids('board');
  if (boardIds.length) put('board', await db.select({ id: boards.id, name: boards.name }).from(boards).where(inArray(boards.id, boardIds)));
  const scriptIds = ids('device_script');
  if (scriptIds.length) put('device_script', await db.select({ id: deviceScripts.id, name: deviceScripts.name }).from(deviceScripts).where(inArray(deviceScripts.id, scriptIds)));
  const userIds = ids('user');
  if (userIds.length) put('user', await db.select({ id: users.id, name: users.username }).from(users).where(inArray(users.id, userIds)));
  const tokenIds = ids('token');
  if (tokenIds.length) put('token', await db.select({ id: apiTokens.id, name: apiTokens.name }).from(apiTokens).where(inArray(apiTokens.id, tokenIds)));
  return names;
}

/** The name a target had when its entry was written (deletions record it in their detail). */
function recordedName(detail: Record<string, unknown> | null): string | null {
  const v = detail?.name ?? detail?.username;
  return typeof v === 'string' ? v : null;
}

export interface NamedEntry {
  userId: string | null;
  username: string | null;
  target: string | null;
  detail: Record<string, unknown> | null;
}

/** `user_name` and `target_name` for each entry, in order. */
export async function namesFor(db: Db, entries: NamedEntry[]): Promise<Array<{ user_name: string | null; target_name: string | null }>> {
  const targets = entries.map((e) => parseTarget(e.target));
  const actors: TargetRef[] = entries.flatMap((e) => (e.userId ? [{ kind: 'user' as const, id: e.userId.toLowerCase() }] : []));
  const known = await lookupNames(db, [...targets.filter((t): t is TargetRef => t !== undefined), ...actors]);
  return entries.map((e, i) => {
    const t = targets[i];
    const userName = (e.userId ? known.get(`user ${e.userId.toLowerCase()}`) : undefined) ?? e.username;
    // A user acting on themself (a sign-in) is named as the actor even after their deletion.
    const self = t?.kind === 'user' && t.id === e.userId?.toLowerCase();
    return { user_name: userName, target_name: t ? (known.get(refKey(t)) ?? (self ? userName : recordedName(e.detail))) : null };
  });
}
