/**
 * `kiln admin …`: account administration. Against a server (--server, KILN_SERVER or the profile's
 * server, unless --local) through its HTTP API with the stored or KILN_API_KEY key, which must be an
 * admin's: the server decides and audits, and its errors keep their codes and exit status. With no
 * server, straight on the local data dir (or DATABASE_URL), with no server running or reachable,
 * acting with an admin's authority under the same rules as the HTTP API (password strength, the
 * last admin stays). Output and exit codes are the same both ways. Passwords come from a hidden
 * prompt, or one line on stdin without a terminal: never from a flag.
 * A running daemon sees local changes at once, API-key revocations and user deletions included (they
 * bump the credentials version every daemon checks its key cache against).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { defaultDataDir } from '../../core/paths.js';
import { ask, closePrompts } from '../prompt.js';
import type { RemoteClient } from '../remote/client.js';

export interface AdminOptions {
  dataDir?: string;
  json?: boolean;
  server?: string;
  profile?: string;
  local?: boolean;
}

export type Db = import('kysely').Kysely<import('../../../daemon/store/schema.js').Database>;
type UserView = import('../../../daemon/accounts/users.js').UserView;
interface KeyView {
  id: string;
  name: string;
  prefix: string;
  owner: { id?: string; username: string | null };
  lastUsedAt: string | null;
  expiresAt: string | null;
  expired: boolean;
}

export const OPERATOR = { id: 'cli', username: 'kiln admin (local)', role: 'admin' as const, teamId: null, via: 'open' as const };

/** The server to administer, chosen like the tool commands choose theirs; none means the data dir. */
async function remote(o: AdminOptions): Promise<RemoteClient | undefined> {
  if (o.dataDir && o.server)
    throw new KilnError('USAGE_ERROR', '--data-dir is for the local data dir and --server for a server: give one of them.');
  // A data dir named on the command line is as explicit as --local.
  if (o.local || o.dataDir) return undefined;
  const { resolveServer } = await import('../profiles.js');
  const server = resolveServer({ server: o.server, profile: o.profile });
  if (!server) return undefined;
  const { connect } = await import('../remote/client.js');
  return connect(server);
}

/** Runs the remote or the local variant of a command; both end with the prompts closed. */
export async function either<T>(o: AdminOptions, viaServer: (c: RemoteClient) => Promise<T>, onDisk: (db: Db) => Promise<T>): Promise<T> {
  const c = await remote(o);
  if (!c) return withStore(o, onDisk);
  try {
    return await viaServer(c);
  } finally {
    closePrompts();
  }
}

async function withStore<T>(o: AdminOptions, f: (db: Db) => Promise<T>): Promise<T> {
  const { openStore, SQLITE_FILE } = await import('../../../daemon/store/db.js');
  await import('../../../daemon/accounts/schema.js');
  const dataDir = path.resolve(o.dataDir ?? defaultDataDir());
  const databaseUrl = process.env.DATABASE_URL || undefined;
  // Opening would make a new, empty database: a mistyped --data-dir listed no users (exit 0), and a user
  // or key created there was one no daemon would ever see. `kiln admin migrate` makes one on purpose.
  if (!databaseUrl && !existsSync(path.join(dataDir, SQLITE_FILE)))
    throw new KilnError(
      'NOT_FOUND',
      `No kiln database in ${dataDir}: name the daemon's data dir (--data-dir, DATA_DIR), or create a database there with \`kiln admin migrate --data-dir ${dataDir}\`.`,
    );
  const store = await openStore({ dataDir, databaseUrl });
  try {
    return await f(store.db);
  } finally {
    await store.close();
    closePrompts();
  }
}

export function noUser(username: string): KilnError {
  return new KilnError('NOT_FOUND', `No user ${username}. \`kiln admin users list\` shows them.`);
}

export async function userByName(db: Db, username: string) {
  const { findUserByName } = await import('../../../daemon/store/users.js');
  const u = await findUserByName(db, username);
  if (!u) throw noUser(username);
  return u;
}

/** The API addresses users by id, the CLI by name. A non-admin key fails here with the server's 403. */
export async function remoteUsers(c: RemoteClient): Promise<UserView[]> {
  return (await c.json<{ users: UserView[] }>('GET', '/api/auth/users')).users;
}

async function remoteUser(c: RemoteClient, username: string): Promise<UserView> {
  const u = (await remoteUsers(c)).find((x) => x.username === username);
  if (!u) throw noUser(username);
  return u;
}

const userPath = (u: { id: string }, rest = '') => `/api/auth/users/${encodeURIComponent(u.id)}${rest}`;

async function newPassword(): Promise<string> {
  const p = await ask('New password: ', { hidden: true });
  if (process.stdin.isTTY && (await ask('Repeat it: ', { hidden: true })) !== p)
    throw new KilnError('USAGE_ERROR', 'The passwords differ.');
  return p;
}

export function out(o: AdminOptions, data: unknown, text: string): void {
  process.stdout.write(o.json ? JSON.stringify(data, null, 2) + '\n' : text);
}

export async function audit(
  db: Db,
  event: import('../../../daemon/accounts/audit.js').AuditEvent,
  target: string,
  details?: Record<string, unknown>,
) {
  const m = await import('../../../daemon/accounts/audit.js');
  await m.audit(db, { event, actor: OPERATOR, target, ip: 'local', details });
}

export async function usersList(o: AdminOptions): Promise<void> {
  const users = await either(o, remoteUsers, async (db) => (await import('../../../daemon/accounts/users.js')).listUsers(db));
  const rows = users.map(
    (u) =>
      `${u.username.padEnd(24)} ${u.role.padEnd(6)} ${(u.team?.name ?? '-').padEnd(14)} ${u.mfaEnabled ? 'mfa' : '-  '} ${u.sso ?? '-'}\n`,
  );
  out(o, users, `${'USER'.padEnd(24)} ${'ROLE'.padEnd(6)} ${'TEAM'.padEnd(14)} MFA SSO\n${rows.join('')}`);
}

export async function usersAdd(username: string, o: AdminOptions & { role?: string; team?: string; service?: boolean }): Promise<void> {
  const body = { username, role: o.role ?? 'user', ...(o.team ? { team: o.team } : {}), ...(o.service ? { service: true } : {}) };
  // A service account has no password: nothing to ask.
  const secret = async () => (o.service ? {} : { password: await newPassword() });
  const u = await either(
    o,
    async (c) => (await c.json<{ user: UserView }>('POST', '/api/auth/users', { ...body, ...(await secret()) })).user,
    async (db) => {
      const { registerUser, userView } = await import('../../../daemon/accounts/users.js');
      const created = await registerUser(db, OPERATOR, { ...body, ...(await secret()) });
      await audit(db, 'user.create', created.username, { id: created.id, role: created.role, ...(o.service ? { service: true } : {}) });
      return userView(db, created);
    },
  );
  out(
    o,
    u,
    o.service
      ? `Created the service account ${u.username} (${u.role}); issue its keys with \`kiln keys create <name> --user ${u.username}\`.\n`
      : `Created ${u.username} (${u.role}).\n`,
  );
}

export async function usersSetRole(username: string, role: string, o: AdminOptions): Promise<void> {
  const changed = await either(
    o,
    async (c) => {
      const u = await remoteUser(c, username);
      if (u.role === role) return false;
      await c.json('PUT', userPath(u), { role });
      return true;
    },
    async (db) => {
      const { updateUser } = await import('../../../daemon/accounts/users.js');
      const u = await userByName(db, username);
      const { changes } = await updateUser(db, undefined, OPERATOR, u.id, { role });
      if (Object.keys(changes).length) await audit(db, 'user.update', u.username, { id: u.id, ...changes });
      return Object.keys(changes).length > 0;
    },
  );
  out(o, { username, role, changed }, changed ? `${username} is now ${role}.\n` : `${username} already is ${role}.\n`);
}

export async function usersResetPassword(username: string, o: AdminOptions): Promise<void> {
  await either(
    o,
    async (c) => {
      const u = await remoteUser(c, username);
      await c.json('POST', userPath(u, '/reset-password'), { newPassword: await newPassword() });
    },
    async (db) => {
      const { setPassword } = await import('../../../daemon/accounts/users.js');
      const u = await userByName(db, username);
      await setPassword(db, undefined, u, await newPassword(), undefined, o.dataDir ?? defaultDataDir());
      await audit(db, 'password.reset', u.username, { id: u.id });
    },
  );
  out(o, { username, ok: true }, `Password of ${username} reset; its sessions and API keys are revoked.\n`);
}

async function confirmDelete(username: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY)
    throw new KilnError(
      'USAGE_ERROR',
      `Deleting ${username} also deletes its sessions, API keys, jobs, library files and pipelines: pass --yes to confirm.`,
    );
  const a = await ask(`Delete ${username} with its sessions, API keys, jobs, library files and pipelines? Type the user name to confirm: `);
  if (a !== username) throw new KilnError('CANCELLED', 'Not deleted.');
}

interface DeleteCounts {
  jobsDeleted: number;
  filesDeleted: number;
  pipelinesDeleted: number;
  watchFoldersDeleted: number;
}

export async function usersDelete(username: string, o: AdminOptions & { yes?: boolean }): Promise<void> {
  const counts = await either<DeleteCounts>(
    o,
    async (c) => {
      const u = await remoteUser(c, username);
      await confirmDelete(username, o.yes);
      const { ok: _ok, ...counts } = await c.json<DeleteCounts & { ok: boolean }>('DELETE', userPath(u));
      return counts;
    },
    async (db) => {
      const { deleteUser } = await import('../../../daemon/accounts/users.js');
      const u = await userByName(db, username);
      await confirmDelete(username, o.yes);
      const { resolveConfig } = await import('../../../daemon/config.js');
      const { user: _u, ...counts } = await deleteUser(
        db,
        undefined,
        undefined,
        OPERATOR,
        u.id,
        resolveConfig({ dataDir: o.dataDir }).sharedDir,
      );
      await audit(db, 'user.delete', u.username, { id: u.id, ...counts });
      return counts;
    },
  );
  out(
    o,
    { username, deleted: true, ...counts },
    `Deleted ${username} with ${counts.jobsDeleted} job(s), ${counts.filesDeleted} library file(s), ${counts.pipelinesDeleted} pipeline(s) and ${counts.watchFoldersDeleted} watch folder(s).\n`,
  );
}

export async function keysList(o: AdminOptions & { user?: string }): Promise<void> {
  const keys = await either(
    o,
    async (c) => {
      // The server quietly narrows ?all=true to the caller's own keys for a non-admin: asking for
      // the users first makes a non-admin key fail with the server's FORBIDDEN instead.
      const users = await remoteUsers(c);
      const owner = o.user === undefined ? undefined : users.find((u) => u.username === o.user);
      if (o.user !== undefined && !owner) throw noUser(o.user);
      const all = (await c.json<{ keys: KeyView[] }>('GET', '/api/v1/api-keys?all=true')).keys;
      return owner ? all.filter((k) => k.owner?.id === owner.id) : all;
    },
    async (db) => {
      const { listApiKeys } = await import('../../../daemon/store/api-keys.js');
      const { keyViews } = await import('../../../daemon/accounts/keys.js');
      const userId = o.user ? (await userByName(db, o.user)).id : undefined;
      return (await keyViews(db, await listApiKeys(db, userId), true)) as unknown as KeyView[];
    },
  );
  const rows = keys.map(
    (k) =>
      `${k.id}  ${(k.owner?.username ?? '?').padEnd(16)} ${k.name.slice(0, 24).padEnd(24)} ${k.prefix}…  last used ${k.lastUsedAt ?? 'never'}${k.expiresAt ? `  ${k.expired ? 'expired' : 'expires'} ${k.expiresAt}` : ''}\n`,
  );
  out(o, keys, rows.join('') || 'No API keys.\n');
}

/** One revoke for `kiln keys revoke` and `kiln admin keys revoke`. */
const noKey = (id: string) => new KilnError('NOT_FOUND', `No API key ${id}. \`kiln keys list\` shows them.`);

export async function keysRevoke(id: string, o: AdminOptions): Promise<void> {
  await either(
    o,
    async (c) => {
      try {
        await c.json('DELETE', `/api/v1/api-keys/${encodeURIComponent(id)}`);
      } catch (e) {
        throw (e as KilnError).code === 'NOT_FOUND' ? noKey(id) : e;
      }
    },
    async (db) => {
      const { revokeApiKey } = await import('../../../daemon/store/api-keys.js');
      if (!(await revokeApiKey(db, id))) throw noKey(id);
      await audit(db, 'key.revoke', id);
    },
  );
  out(o, { id, revoked: true }, `Revoked ${id}.\n`);
}

export async function mfaReset(username: string, o: AdminOptions): Promise<void> {
  await either(
    o,
    async (c) => {
      await c.json('POST', userPath(await remoteUser(c, username), '/mfa/reset'));
    },
    async (db) => {
      const { clearMfa } = await import('../../../daemon/accounts/mfa.js');
      const u = await userByName(db, username);
      await clearMfa(db, u.id);
      await audit(db, 'mfa.reset', u.username, { id: u.id });
    },
  );
  out(o, { username, mfaEnabled: false }, `MFA of ${username} is off; it signs in with its password alone until it enrolls again.\n`);
}
