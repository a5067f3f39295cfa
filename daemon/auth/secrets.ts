/** Password and API-key hashing (scrypt from node:crypto, on the thread pool) and token generation. */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEYLEN = 32;

function scrypt(secret: string, salt: Buffer, keylen: number, o: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(secret, salt, keylen, o, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$N$r$p$salt$hash` (base64url parts) so parameters can change without breaking old hashes. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(secret, salt, KEYLEN, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifySecret(secret: string, stored: string | null | undefined): Promise<boolean> {
  const parts = stored?.split('$');
  if (parts?.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * 1024 * 1024,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Passwords are compared in Unicode NFKC (NIST SP 800-63B §5.1.1.2, "Normalization Process for
 * Stabilized Strings"): "é" typed as one code point or as "e" plus a combining accent, or a full-width
 * digit, is the same password whatever keyboard or system typed it.
 */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

export function hashPassword(password: string): Promise<string> {
  return hashSecret(normalizePassword(password));
}

/**
 * Checks a password against its stored hash in its normalised form, then as typed when that differs
 * (hashes stored before passwords were normalised hold them as they were typed then). The number of
 * scrypts depends only on the password sent, never on whether the account exists. A match as typed
 * hands `rehash` the normalised form's hash to store, so that the next sign-in from a keyboard or
 * system that composes the characters differently works too.
 */
export async function verifyPassword(
  password: string,
  stored: string | null | undefined,
  rehash?: (hash: string) => Promise<unknown>,
): Promise<boolean> {
  const normalized = normalizePassword(password);
  if (await verifySecret(normalized, stored)) return true;
  if (normalized === password || !(await verifySecret(password, stored))) return false;
  if (rehash) await rehash(await hashSecret(normalized));
  return true;
}

/** A dummy hash to verify against when the user does not exist, so timing does not reveal usernames. */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  return (dummy ??= hashSecret(randomBytes(16).toString('hex')));
}

export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export function newId(): string {
  return randomBytes(12).toString('hex');
}

export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

export const API_KEY_PREFIX_LEN = 12;

/** `si_` + 96 hex characters. */
export function newApiKey(): string {
  return 'si_' + randomBytes(48).toString('hex');
}

export function isApiKeyShape(s: string): boolean {
  return /^si_[0-9a-f]{96}$/.test(s);
}

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
