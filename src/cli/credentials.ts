/**
 * Where the API key of a profile lives. The OS keyring first (@napi-rs/keyring: Secret Service on
 * Linux, Keychain on macOS, Credential Manager on Windows; prebuilt binaries, so it installs offline
 * with no libsecret headers, unlike the archived keytar). Where there is no keyring service (a
 * headless server without D-Bus), a JSON file with mode 0600 in the config directory, said on stderr.
 * KILN_API_KEY overrides both, for CI. KILN_CREDENTIAL_STORE=file|keyring forces one store.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { configDir } from './profiles.js';

const SERVICE = 'kiln';

export type KeyStore = 'keyring' | 'file';

function account(profile: string, server: string): string {
  return `${profile}@${server}`;
}

export function credentialsFile(): string {
  return path.join(configDir(), 'credentials.json');
}

async function keyringEntry(profile: string, server: string) {
  const { AsyncEntry } = await import('@napi-rs/keyring');
  return new AsyncEntry(SERVICE, account(profile, server));
}

function forced(): KeyStore | undefined {
  const v = process.env.KILN_CREDENTIAL_STORE;
  if (v === undefined || v === '') return undefined;
  if (v === 'file' || v === 'keyring') return v;
  throw new KilnError('USAGE_ERROR', `KILN_CREDENTIAL_STORE must be "file" or "keyring" (got "${v}").`);
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e)
    .split('\n')[0]!
    .trim();
}

async function readFileStore(): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(credentialsFile(), 'utf8')) as Record<string, string>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new KilnError('UNAVAILABLE', `Cannot read ${credentialsFile()}: ${firstLine(e)}`);
  }
}

async function writeFileStore(data: Record<string, string>): Promise<void> {
  const file = credentialsFile();
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written under a temp name with mode 0600 from the start: the key is never readable by others.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

/** Stores the key; returns where it went. */
export async function saveKey(profile: string, server: string, key: string): Promise<KeyStore> {
  const want = forced();
  if (want !== 'file') {
    try {
      await (await keyringEntry(profile, server)).setPassword(key);
      // Some back-ends accept a write they cannot read back (locked or missing collection).
      if ((await (await keyringEntry(profile, server)).getPassword()) === key) return 'keyring';
      throw new Error('the key could not be read back');
    } catch (e) {
      if (want === 'keyring') throw new KilnError('UNAVAILABLE', `The OS keyring is not available: ${firstLine(e)}`);
      process.stderr.write(
        `kiln: no OS keyring available (${firstLine(e)}); storing the API key in ${credentialsFile()} (mode 0600) instead.\n`,
      );
    }
  }
  const data = await readFileStore();
  data[account(profile, server)] = key;
  await writeFileStore(data);
  return 'file';
}

/** The key for a profile and server: KILN_API_KEY, else the store the profile says, else both. */
export async function loadKey(profile: string, server: string, store?: KeyStore): Promise<string | undefined> {
  if (process.env.KILN_API_KEY) return process.env.KILN_API_KEY;
  return loadStoredKey(profile, server, store);
}

/**
 * The key `kiln login` stored for a profile and server, whatever KILN_API_KEY says: the one to revoke
 * when logging out or logging in again (KILN_API_KEY is some other key, and maybe nobody's to revoke).
 */
export async function loadStoredKey(profile: string, server: string, store?: KeyStore): Promise<string | undefined> {
  if (store !== 'file' && forced() !== 'file') {
    try {
      const v = await (await keyringEntry(profile, server)).getPassword();
      if (v) return v;
    } catch {
      // No keyring here: the file store is the fallback.
    }
  }
  if (store === 'keyring') return undefined;
  return (await readFileStore())[account(profile, server)];
}

export async function deleteKey(profile: string, server: string): Promise<void> {
  try {
    await (await keyringEntry(profile, server)).deleteCredential();
  } catch {
    // Nothing stored there, or no keyring.
  }
  const data = await readFileStore();
  if (account(profile, server) in data) {
    delete data[account(profile, server)];
    await writeFileStore(data);
  }
}
