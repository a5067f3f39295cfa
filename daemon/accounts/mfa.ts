/**
 * TOTP multi-factor authentication (RFC 6238: SHA-1, 6 digits, 30 s, ±1 step accepted). A code is
 * accepted once: the last used time step is stored, so a code seen over someone's shoulder cannot be
 * replayed within its window. Recovery codes (10, 80 random bits each) are shown once and stored as
 * sha256. The TOTP secret itself must be readable to check codes, so it is stored encrypted with the
 * data key (daemon/auth/data-key.ts), bound to its user.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { decryptSecret, encryptSecret, mfaAad } from '../auth/data-key.js';
import { newId, sha256 } from '../auth/secrets.js';
import type { Database, UsersTable } from '../store/schema.js';

export const MFA_TOKEN_TTL_MS = 5 * 60_000;
const MFA_MAX_ATTEMPTS = 5;
const RECOVERY_CODES = 10;

async function totpFor(secretBase32: string, label: string, issuer: string) {
  const { TOTP, Secret } = await import('otpauth');
  // The Key URI format forbids a colon in the issuer: the label is "issuer:account", and an app splitting
  // at the first colon showed "Media:ann" as the account of a product named "Acme: Media".
  const safeIssuer = issuer.replace(/:/g, ' ').replace(/\s+/g, ' ').trim() || 'kiln';
  return new TOTP({ issuer: safeIssuer, label, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secretBase32) });
}

/** The time step a code belongs to, or null when it does not match (±1 step). */
export async function matchTotp(secretBase32: string, typed: string, now = Date.now()): Promise<number | null> {
  // Authenticator apps show the code as "123 456", and that is what gets copied.
  const code = typed.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(code)) return null;
  const totp = await totpFor(secretBase32, 'x', 'kiln');
  const delta = totp.validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 30_000) + delta;
}

export async function startEnrollment(
  db: Kysely<Database>,
  key: Buffer,
  user: UsersTable,
  issuer: string,
): Promise<{ secret: string; otpauthUri: string; qrCode: string }> {
  if (Number(user.mfa_enabled ?? 0) === 1)
    throw new KilnError('CONFLICT', 'MFA is already enabled; disable it first to enroll a new authenticator.');
  const { Secret } = await import('otpauth');
  const secret = new Secret({ size: 20 }).base32;
  await db
    .updateTable('users')
    .set({ mfa_pending_secret: encryptSecret(key, secret, mfaAad(user.id)), updated_at: Date.now() })
    .where('id', '=', user.id)
    .execute();
  const otpauthUri = (await totpFor(secret, user.username, issuer)).toString();
  const { default: QRCode } = await import('qrcode');
  const qrCode = await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 2, width: 256 });
  return { secret, otpauthUri, qrCode };
}

function newRecoveryCode(): string {
  // 10 bytes = 80 bits, written as 4-4-4-4 groups of base32 for reading aloud.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const b = randomBytes(16);
  let s = '';
  for (let i = 0; i < 16; i++) s += alphabet[b[i]! % 32];
  return s.match(/.{4}/g)!.join('-');
}

function normalizeRecovery(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

export async function confirmEnrollment(db: Kysely<Database>, key: Buffer, user: UsersTable, code: string): Promise<string[]> {
  if (Number(user.mfa_enabled ?? 0) === 1) throw new KilnError('CONFLICT', 'MFA is already enabled.');
  if (!user.mfa_pending_secret) throw new KilnError('CONFLICT', 'No MFA enrollment is in progress: POST /api/auth/mfa/enroll first.');
  const step = await matchTotp(decryptSecret(key, user.mfa_pending_secret, mfaAad(user.id)), code);
  // 403, not 401: the session is fine (a client must not take this for being signed out), the code is not.
  if (step === null)
    throw new KilnError('FORBIDDEN', 'The code does not match. Check the authenticator app and the device clock.', {
      reason: 'mfa-code-invalid',
    });
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('users')
      .set({ mfa_secret: user.mfa_pending_secret, mfa_pending_secret: null, mfa_enabled: 1, mfa_last_step: step, updated_at: Date.now() })
      .where('id', '=', user.id)
      .execute();
    await tx.deleteFrom('mfa_recovery_codes').where('user_id', '=', user.id).execute();
    await tx
      .insertInto('mfa_recovery_codes')
      .values(codes.map((c) => ({ id: newId(), user_id: user.id, code_hash: sha256(normalizeRecovery(c)), used_at: null })))
      .execute();
  });
  return codes;
}

export async function clearMfa(db: Kysely<Database>, userId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('users')
      .set({ mfa_secret: null, mfa_pending_secret: null, mfa_enabled: 0, mfa_last_step: null, updated_at: Date.now() })
      .where('id', '=', userId)
      .execute();
    await tx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
    await tx.deleteFrom('mfa_challenges').where('user_id', '=', userId).execute();
  });
}

/** Checks a current TOTP code for an enabled user and burns its time step. */
export async function useTotp(db: Kysely<Database>, key: Buffer, user: UsersTable, code: string): Promise<boolean> {
  if (!user.mfa_secret) return false;
  const step = await matchTotp(decryptSecret(key, user.mfa_secret, mfaAad(user.id)), code);
  if (step === null || step <= Number(user.mfa_last_step ?? -1)) return false;
  // The conditional update makes two racing requests with the same code succeed at most once.
  const r = await db
    .updateTable('users')
    .set({ mfa_last_step: step })
    .where('id', '=', user.id)
    .where((eb) => eb.or([eb('mfa_last_step', 'is', null), eb('mfa_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function useRecoveryCode(db: Kysely<Database>, userId: string, code: string): Promise<boolean> {
  const hash = sha256(normalizeRecovery(code));
  const rows = await db
    .selectFrom('mfa_recovery_codes')
    .select(['id', 'code_hash'])
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
  const want = Buffer.from(hash, 'hex');
  let hit: string | undefined;
  // Compare against every unused code in constant time, without stopping at the first match.
  for (const r of rows) if (timingSafeEqual(Buffer.from(r.code_hash, 'hex'), want)) hit ??= r.id;
  if (!hit) return false;
  const u = await db
    .updateTable('mfa_recovery_codes')
    .set({ used_at: Date.now() })
    .where('id', '=', hit)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(u.numUpdatedRows) > 0;
}

export async function remainingRecoveryCodes(db: Kysely<Database>, userId: string): Promise<number> {
  const r = await db
    .selectFrom('mfa_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function createChallenge(db: Kysely<Database>, userId: string): Promise<string> {
  const token = 'mfa_' + randomBytes(32).toString('base64url');
  await db.deleteFrom('mfa_challenges').where('expires_at', '<', Date.now()).execute();
  await db
    .insertInto('mfa_challenges')
    .values({ id: sha256(token), user_id: userId, attempts: 0, expires_at: Date.now() + MFA_TOKEN_TTL_MS })
    .execute();
  return token;
}

/** The user a pending challenge belongs to; an unknown, expired or exhausted token is 401. */
export async function openChallenge(db: Kysely<Database>, token: string): Promise<{ id: string; userId: string }> {
  const row = await db.selectFrom('mfa_challenges').selectAll().where('id', '=', sha256(token)).executeTakeFirst();
  if (!row || Number(row.expires_at) <= Date.now() || row.attempts >= MFA_MAX_ATTEMPTS) {
    if (row) await db.deleteFrom('mfa_challenges').where('id', '=', row.id).execute();
    throw new KilnError('UNAUTHORIZED', 'The MFA challenge is unknown, used or expired. Log in again.', { reason: 'mfa-token-invalid' });
  }
  return { id: row.id, userId: row.user_id };
}

export async function failChallenge(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .updateTable('mfa_challenges')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Single use: only the request that deletes the row may issue the session. */
export async function consumeChallenge(db: Kysely<Database>, id: string): Promise<boolean> {
  const r = await db.deleteFrom('mfa_challenges').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
