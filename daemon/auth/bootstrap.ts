/**
 * First start: with no users, create the admin from ADMIN_USERNAME/ADMIN_PASSWORD, or with a random
 * password written once to DATA_DIR/initial-admin-password (mode 0600) for the operator to read.
 */
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonConfig } from '../config.js';
import type { Store } from '../store/db.js';
import { countUsers, createUser } from '../store/users.js';
import { generatePassword, verifySecret } from './secrets.js';

export interface BootstrapResult {
  /** Set only when a password was generated (to print once). */
  generatedPassword?: string;
  passwordFile?: string;
}

export async function ensureAdmin(store: Store, config: DaemonConfig): Promise<BootstrapResult> {
  if ((await countUsers(store.db)) > 0) return {};
  const password = config.adminPassword ?? generatePassword();
  try {
    await createUser(store.db, { username: config.adminUsername, password, role: 'admin' });
  } catch (e) {
    // Another instance on the same database won the race.
    if ((await countUsers(store.db)) > 0) return {};
    throw e;
  }
  if (config.adminPassword) return {};
  const passwordFile = path.join(config.dataDir, 'initial-admin-password');
  await writeFile(passwordFile, password + '\n', { mode: 0o600, flag: 'w' });
  // mode only applies when the file is created; a leftover file keeps its old mode otherwise.
  await chmod(passwordFile, 0o600);
  return { generatedPassword: password, passwordFile };
}

export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/**
 * The generated first password stops being true once that account's password changes. Called before the
 * change with the account's current hash: returns a function that removes the file afterwards when it
 * holds that account's password (any other account's change leaves it alone).
 */
export async function initialPasswordCleanup(dataDir: string, currentHash: string | null): Promise<() => Promise<void>> {
  const file = path.join(dataDir, INITIAL_PASSWORD_FILE);
  const written = (await readFile(file, 'utf8').catch(() => '')).trim();
  const holds = !!written && !!currentHash && (await verifySecret(written, currentHash));
  return async () => {
    if (holds) await rm(file, { force: true });
  };
}
