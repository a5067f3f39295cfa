/**
 * The data key: 32 bytes that encrypt secrets the daemon must read back (TOTP secrets, passwords in
 * saved pipelines) with AES-256-GCM. It comes from SECRET_KEY (64 hex digits or base64 of 32 bytes),
 * else from `secret.key` in the shared dir (the data dir unless SHARED_DIR is set, so instances of one
 * deployment share it), created 0600 at the first start. A check value in the database makes an
 * instance with another key refuse to start instead of failing every MFA login later.
 *
 * Stored form: `enc:v1:<iv>.<ciphertext>.<tag>` (base64url). The associated data names what the value
 * is and whose it is (e.g. `mfa:<userId>`), so a ciphertext copied to another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database } from '../store/schema.js';
import '../accounts/schema.js';

export const KEY_FILE = 'secret.key';
const PREFIX = 'enc:v1:';
const CHECK_SETTING = 'data-key-check';

function parseKey(raw: string): Buffer {
  const s = raw.trim();
  if (/^[0-9a-f]{64}$/i.test(s)) return Buffer.from(s, 'hex');
  const key = Buffer.from(s, 'base64');
  // Buffer.from skips characters that are not base64: compare the round trip to catch typos.
  if (key.length === 32 && key.toString('base64').replace(/=+$/, '') === s.replace(/=+$/, '')) return key;
  throw new KilnError('USAGE_ERROR', 'SECRET_KEY must be 32 bytes as 64 hex digits or base64 (make one with: openssl rand -hex 32).');
}

/** SECRET_KEY when set, else the key file (created on first use, mode 0600). */
export async function loadDataKey(secretKey: string | undefined, dir: string): Promise<Buffer> {
  if (secretKey) return parseKey(secretKey);
  const file = path.join(dir, KEY_FILE);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    // `wx`: two instances starting at once on a shared dir must not each write their own key.
    await writeFile(file, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  await chmod(file, 0o600);
  return parseKey(await readFile(file, 'utf8'));
}

/** Records the key's check value on first start; refuses a key that is not the one already recorded. */
export async function checkDataKey(db: Kysely<Database>, key: Buffer): Promise<void> {
  const check = createHmac('sha256', key).update('kiln data key check').digest('hex');
  await db
    .insertInto('app_settings')
    .values({ key: CHECK_SETTING, value: JSON.stringify(check), updated_at: Date.now() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('app_settings').select('value').where('key', '=', CHECK_SETTING).executeTakeFirstOrThrow();
  if (JSON.parse(row.value) !== check)
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `The data key is not the one this database's secrets were encrypted with: set SECRET_KEY (or ${KEY_FILE} in the data dir) to the key of the first start, the same on every instance.`,
      { reason: 'data-key-mismatch' },
    );
}

export function isEncrypted(v: unknown): v is string {
  return typeof v === 'string' && v.startsWith(PREFIX);
}

export function encryptSecret(key: Buffer, plain: string, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `${PREFIX}${iv.toString('base64url')}.${ct.toString('base64url')}.${c.getAuthTag().toString('base64url')}`;
}

/** Decrypts a stored value; a clear value (written before encryption existed) is returned as is. */
export function decryptSecret(key: Buffer, stored: string, aad: string): string {
  if (!isEncrypted(stored)) return stored;
  const [iv, ct, tag] = stored.slice(PREFIX.length).split('.');
  try {
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv ?? '', 'base64url'));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct ?? '', 'base64url')), d.final()]).toString('utf8');
  } catch (e) {
    throw new KilnError('INTERNAL', 'A stored secret could not be decrypted (wrong data key or damaged value).', { cause: e });
  }
}

export const mfaAad = (userId: string) => `mfa:${userId}`;

/** Encrypts TOTP secrets stored in clear by kiln versions before encryption at rest (runs at every start; cheap when none are left). */
export async function encryptClearMfaSecrets(db: Kysely<Database>, key: Buffer): Promise<number> {
  const rows = await db
    .selectFrom('users')
    .select(['id', 'mfa_secret', 'mfa_pending_secret'])
    .where((eb) =>
      eb.or([
        eb.and([eb('mfa_secret', 'is not', null), eb('mfa_secret', 'not like', `${PREFIX}%`)]),
        eb.and([eb('mfa_pending_secret', 'is not', null), eb('mfa_pending_secret', 'not like', `${PREFIX}%`)]),
      ]),
    )
    .execute();
  for (const r of rows) {
    const enc = (v: string | null | undefined) => (v && !isEncrypted(v) ? encryptSecret(key, v, mfaAad(r.id)) : v);
    await db
      .updateTable('users')
      .set({ mfa_secret: enc(r.mfa_secret), mfa_pending_secret: enc(r.mfa_pending_secret) })
      .where('id', '=', r.id)
      .execute();
  }
  return rows.length;
}
