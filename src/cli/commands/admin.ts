/**
 * `kiln admin …`: account administration for the person who runs the server, straight on the local
 * data dir (or DATABASE_URL), with no server running or reachable. Acts with an admin's authority and
 * keeps the same rules as the HTTP API (password strength, the last admin stays). Passwords come from
 * a hidden prompt, or one line on stdin without a terminal: never from a flag.
 * A running daemon sees changes at once, except API-key revocations, which it may honour from its
 * verification cache for up to a minute.
 */
import { KilnError } from '../../core/errors.js';
import { defaultDataDir } from '../../core/paths.js';
import { ask, closePrompts } from '../prompt.js';

export interface AdminOptions {
  dataDir?: string;
  json?: boolean;
}

const OPERATOR = { id: 'cli', username: 'kiln admin (local)', role: 'admin' as const, teamId: null, via: 'open' as const };

async function withStore<T>(o: AdminOptions, f: (db: import('kysely').Kysely<import('../../../daemon/store/schema.js').Database>) => Promise<T>): Promise<T> {
  const { openStore } = await import('../../../daemon/store/db.js');
  await import('../../../daemon/accounts/schema.js');
  const store = await openStore({ dataDir: o.dataDir ?? defaultDataDir(), databaseUrl: process.env.DATABASE_URL || undefined });
  try {
    return await f(store.db);
  } finally {
    await store.close();
    closePrompts();
  }
}

async function userByName(db: import('kysely').Kysely<import('../../../daemon/store/schema.js').Database>, username: string) {
  const { findUserByName } = await import('../../../daemon/store/users.js');
  const u = await findUserByName(db, username);
  if (!u) throw new KilnError('NOT_FOUND', `No user ${username}. \`kiln admin users list\` shows them.`);
  return u;
}

async function newPassword(): Promise<string> {
  const p = await ask('New password: ', { hidden: true });
  if (process.stdin.isTTY && (await ask('Repeat it: ', { hidden: true })) !== p) throw new KilnError('USAGE_ERROR', 'The passwords differ.');
  return p;
}

function out(o: AdminOptions, data: unknown, text: string): void {
  process.stdout.write(o.json ? JSON.stringify(data, null, 2) + '\n' : text);
}

async function audit(db: Parameters<typeof userByName>[0], event: import('../../../daemon/accounts/audit.js').AuditEvent, target: string, details?: Record<string, unknown>) {
  const m = await import('../../../daemon/accounts/audit.js');
  await m.audit(db, { event, actor: OPERATOR, target, ip: 'local', details });
}

export async function usersList(o: AdminOptions): Promise<void> {
  await withStore(o, async (db) => {
    const { listUsers } = await import('../../../daemon/accounts/users.js');
    const users = await listUsers(db);
    const rows = users.map((u) => `${u.username.padEnd(24)} ${u.role.padEnd(6)} ${(u.team?.name ?? '-').padEnd(14)} ${u.mfaEnabled ? 'mfa' : '-  '} ${u.sso ?? '-'}\n`);
    out(o, users, `${'USER'.padEnd(24)} ${'ROLE'.padEnd(6)} ${'TEAM'.padEnd(14)} MFA SSO\n${rows.join('')}`);
  });
}

export async function usersAdd(username: string, o: AdminOptions & { role?: string; team?: string }): Promise<void> {
  await withStore(o, async (db) => {
    const { registerUser, userView } = await import('../../../daemon/accounts/users.js');
    const password = await newPassword();
    const u = await registerUser(db, OPERATOR, { username, password, role: o.role ?? 'user', ...(o.team ? { team: o.team } : {}) });
    await audit(db, 'user.create', u.username, { id: u.id, role: u.role });
    out(o, await userView(db, u), `Created ${u.username} (${u.role}).\n`);
  });
}

export async function usersSetRole(username: string, role: string, o: AdminOptions): Promise<void> {
  await withStore(o, async (db) => {
    const { updateUser } = await import('../../../daemon/accounts/users.js');
    const u = await userByName(db, username);
    const { changes } = await updateUser(db, undefined, OPERATOR, u.id, { role });
    if (Object.keys(changes).length) await audit(db, 'user.update', u.username, { id: u.id, ...changes });
    out(o, { username, role, changed: Object.keys(changes).length > 0 }, Object.keys(changes).length ? `${username} is now ${role}.\n` : `${username} already is ${role}.\n`);
  });
}

export async function usersResetPassword(username: string, o: AdminOptions): Promise<void> {
  await withStore(o, async (db) => {
    const { setPassword } = await import('../../../daemon/accounts/users.js');
    const u = await userByName(db, username);
    await setPassword(db, undefined, u, await newPassword());
    await audit(db, 'password.reset', u.username, { id: u.id });
    out(o, { username, ok: true }, `Password of ${username} reset; its sessions and API keys are revoked.\n`);
  });
}

export async function usersDelete(username: string, o: AdminOptions & { yes?: boolean }): Promise<void> {
  await withStore(o, async (db) => {
    const { deleteUser } = await import('../../../daemon/accounts/users.js');
    const u = await userByName(db, username);
    if (!o.yes) {
      if (!process.stdin.isTTY) throw new KilnError('USAGE_ERROR', `Deleting ${username} also deletes its sessions, API keys, jobs, library files and pipelines: pass --yes to confirm.`);
      const a = await ask(`Delete ${username} with its sessions, API keys, jobs, library files and pipelines? Type the user name to confirm: `);
      if (a !== username) throw new KilnError('CANCELLED', 'Not deleted.');
    }
    const { resolveConfig } = await import('../../../daemon/config.js');
    const { user: _u, ...counts } = await deleteUser(db, undefined, undefined, OPERATOR, u.id, resolveConfig({ dataDir: o.dataDir }).sharedDir);
    await audit(db, 'user.delete', u.username, { id: u.id, ...counts });
    out(o, { username, deleted: true, ...counts }, `Deleted ${username} with ${counts.jobsDeleted} job(s), ${counts.filesDeleted} library file(s) and ${counts.pipelinesDeleted} pipeline(s).\n`);
  });
}

export async function keysList(o: AdminOptions & { user?: string }): Promise<void> {
  await withStore(o, async (db) => {
    const { listApiKeys } = await import('../../../daemon/store/api-keys.js');
    const { keyViews } = await import('../../../daemon/accounts/keys.js');
    const userId = o.user ? (await userByName(db, o.user)).id : undefined;
    const keys = (await keyViews(db, await listApiKeys(db, userId), true)) as { id: string; name: string; prefix: string; owner: { username: string | null }; lastUsedAt: string | null; expiresAt: string | null; expired: boolean }[];
    const rows = keys.map((k) => `${k.id}  ${(k.owner.username ?? '?').padEnd(16)} ${k.name.slice(0, 24).padEnd(24)} ${k.prefix}…  last used ${k.lastUsedAt ?? 'never'}${k.expiresAt ? `  ${k.expired ? 'expired' : 'expires'} ${k.expiresAt}` : ''}\n`);
    out(o, keys, rows.join('') || 'No API keys.\n');
  });
}

export async function keysRevoke(id: string, o: AdminOptions): Promise<void> {
  await withStore(o, async (db) => {
    const { deleteApiKey } = await import('../../../daemon/store/api-keys.js');
    if (!(await deleteApiKey(db, id))) throw new KilnError('NOT_FOUND', `No API key ${id}. \`kiln admin keys list\` shows them.`);
    await audit(db, 'key.revoke', id);
    out(o, { id, revoked: true }, `Revoked ${id}.\n`);
  });
}

export async function mfaReset(username: string, o: AdminOptions): Promise<void> {
  await withStore(o, async (db) => {
    const { clearMfa } = await import('../../../daemon/accounts/mfa.js');
    const u = await userByName(db, username);
    await clearMfa(db, u.id);
    await audit(db, 'mfa.reset', u.username, { id: u.id });
    out(o, { username, mfaEnabled: false }, `MFA of ${username} is off; it signs in with its password alone until it enrolls again.\n`);
  });
}
