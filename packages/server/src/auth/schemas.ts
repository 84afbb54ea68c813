import { z } from '@hono/zod-openapi';
import { ROLES } from './roles.ts';
import { isValidUsername, USERNAME_PATTERN, USERNAME_RULE, usernameKey } from './usernames.ts';

const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

export const UserSchema = z
  .object({
    id: z.string().uuid(),
    username: z.string().openapi({ example: 'alice' }),
    role: z.enum(ROLES),
    created_at: isoTime,
  })
  .openapi('User');

/** `MM_API_TOKEN` and auth-off callers have no user row: id and created_at are null. */
export const MeSchema = z
  .object({
    user: z.object({ id: z.string().nullable(), username: z.string().nullable(), role: z.enum(ROLES), created_at: isoTime.nullable() }),
    auth: z.enum(['on', 'off']).openapi({ description: '`off`: no user exists and no MM_API_TOKEN is set (a loopback development server)' }),
    via: z.enum(['session', 'token', 'api_token', 'none']),
  })
  .openapi('Me');

/** Usernames: letters, digits and `._@-`, starting with a letter or digit; unique by their key (auth/usernames.ts). */
export const Username = z.string().refine(isValidUsername, USERNAME_RULE).openapi({ pattern: USERNAME_PATTERN.source });

export const Password = z.string().min(8, 'must be at least 8 characters').max(1024, 'must be at most 1024 characters').refine((s) => !s.includes('\0'), 'must not contain NUL');

/** A password is weak (refused) when it is, ignoring case, the user's own name. */
export const isWeakPasswordFor = (password: string, username: string): boolean => usernameKey(password.trim()) === usernameKey(username);

export const TokenSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    user_id: z.string().uuid().openapi({ description: 'Whose token it is' }),
    username: z.string().openapi({ description: "Its owner's name" }),
    created_at: isoTime,
    expires_at: isoTime.nullable(),
    last_used_at: isoTime.nullable(),
  })
  .openapi('Token');

export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: z.looseObject({ status: z.number().int(), code: z.string() }) } },
});
