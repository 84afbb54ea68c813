/**
 * THE rule for user names, at creation and at sign-in: a name's key is its NFKC form in
 * lower case, and two names with one key are one user. A name is accepted at creation only
 * if it is plain ASCII (letters, digits, `._@-`) and NFKC leaves it unchanged, so every
 * stored name's key is simply its lower case, and PostgreSQL's `lower()` (the unique index)
 * agrees with JavaScript's on it. A typed name whose key is not such a name (`kİki`, whose
 * lower case is `ki̇ki` with a combining dot) is nobody: it is never handed to the
 * database's own case folding, which would have mapped it to `kiki`.
 */
export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const USERNAME_RULE = 'must be 1-64 letters, digits or . _ @ -, starting with a letter or digit';

export const usernameKey = (name: string): string => name.normalize('NFKC').toLowerCase();

/** Whether a name may be given to a new user: the pattern, and unchanged by NFKC. */
export const isValidUsername = (name: string): boolean => USERNAME_PATTERN.test(name) && name.normalize('NFKC') === name;

/** The key to look a typed name up by, or undefined when it can name no user. */
export function lookupKey(typed: string): string | undefined {
  const key = usernameKey(typed);
  return USERNAME_PATTERN.test(key) ? key : undefined;
}
