import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Seals the subscriptions' signing secrets at rest (docs/security.md, "Webhook secrets"). The
 * server signs every delivery, so it must be able to read a secret back: a hash will not do.
 * The secrets are stored AES-256-GCM-encrypted under a key kept outside the database, so a
 * copy of the database (a backup, a read-only role) does not let anyone forge deliveries.
 *
 * The key is `MM_WEBHOOK_SECRET_KEY` when set (replicas that do not share `MM_DATA_DIR` must set
 * the same value), else 32 random bytes in `$MM_DATA_DIR/webhook-secrets.key` (mode 0600),
 * made by whichever replica starts first.
 */
export const KEY_FILE = 'webhook-secrets.key';
const VERSION = 'v1';

export class SecretKeyMismatch extends Error {
  override name = 'SecretKeyMismatch';
}

export class SecretBox {
  /** The key's id (first 8 hex digits of its sha256): a sealed secret names the key it needs. */
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook secret key must be 32 bytes');
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  /** The box of `MM_WEBHOOK_SECRET_KEY`, or of the key file in the data folder (made if missing). */
  static async open(opts: { secretKey: string | undefined; dataDir: string }): Promise<SecretBox> {
    if (opts.secretKey) return new SecretBox(createHash('sha256').update(`mm-webhook-secrets\0${opts.secretKey}`).digest());
    return new SecretBox(await readOrMakeKeyFile(path.join(opts.dataDir, KEY_FILE)));
  }

  /** `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts). */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, this.keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  unseal(sealed: string): string {
    const [version, keyId, iv, tag, ct] = sealed.split('.');
    if (version !== VERSION || !keyId || iv === undefined || tag === undefined || ct === undefined) throw new Error('not a sealed webhook secret');
    if (keyId !== this.keyId) {
      throw new SecretKeyMismatch(`the secret was sealed with another key (${keyId}, this server has ${this.keyId}): give every replica the same MM_WEBHOOK_SECRET_KEY or MM_DATA_DIR`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/**
 * Reads the key file, or makes it: written to a temporary name and linked into place, so two
 * replicas starting at once on a shared folder end with the same key (the second's link
 * fails and it reads the first's), and no reader sees half a file.
 */
async function readOrMakeKeyFile(file: string): Promise<Buffer> {
  const read = async () => Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  try {
    return await read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.writeFile(tmp, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  return read();
}
