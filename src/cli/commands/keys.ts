/**
 * `kiln keys create|rotate|revoke|list`: API keys, on a server through its API (your own keys, or with an
 * admin's key those of service accounts) or straight on the local data dir with an admin's authority, the
 * same choice `kiln admin` makes (--server / KILN_SERVER / the profile's server, else --data-dir). A new
 * secret is printed once, on stdout, and never stored by the CLI.
 */
import type { Command } from 'commander';
import { KilnError } from '../../core/errors.js';
import { target } from './admin-program.js';

type Opts = Record<string, string | boolean | undefined>;
type AdminOptions = import('./admin.js').AdminOptions;

interface KeyView {
  id: string;
  name: string;
  prefix: string;
  owner?: { id?: string; username: string | null; service?: boolean };
  lastUsedAt: string | null;
  expiresAt: string | null;
  expired: boolean;
}

interface Secret {
  id: string;
  name: string;
  key: string;
  expiresAt: string | null;
  owner?: string;
  previousKeyValidUntil?: string;
}

const admin = () => import('./admin.js');
const noKey = (id: string) => new KilnError('NOT_FOUND', `No API key ${id}. \`kiln keys list\` shows them.`);

function expiry(o: Opts): Record<string, unknown> {
  if (o.expiresInDays === undefined) return {};
  const n = Number(o.expiresInDays);
  if (!Number.isFinite(n) || n <= 0) throw new KilnError('USAGE_ERROR', '--expires-in-days must be a positive number of days.');
  return { expiresInDays: n };
}

async function keysCreate(name: string, o: AdminOptions & Opts): Promise<void> {
  const a = await admin();
  const created = await a.either<Secret>(
    o,
    async (c) => {
      const userId = o.user ? (await a.remoteUsers(c)).find((u) => u.username === o.user)?.id : undefined;
      if (o.user && !userId) throw a.noUser(String(o.user));
      return c.json<Secret>('POST', '/api/v1/api-keys', { name, ...(userId ? { userId } : {}), ...expiry(o) });
    },
    async (db) => {
      if (!o.user)
        throw new KilnError(
          'USAGE_ERROR',
          'On the data dir, name the service account the key is for with --user (people make their own keys, signed in).',
        );
      const { issueKey } = await import('../../../daemon/accounts/keys.js');
      const owner = await a.userByName(db, String(o.user));
      const k = await issueKey(db, a.OPERATOR, { userId: owner.id, ...expiry(o) }, name);
      await a.audit(db, 'key.create', k.id, { name, expiresAt: k.expiresAt, owner: k.owner });
      return k;
    },
  );
  a.out(
    o,
    created,
    `${created.key}\nCreated API key ${created.id} "${created.name}"${created.owner ? ` for ${created.owner}` : ''}${created.expiresAt ? `, expires ${created.expiresAt}` : ''}. It is shown only now.\n`,
  );
}

async function keysRotate(id: string, o: AdminOptions): Promise<void> {
  const a = await admin();
  const r = await a.either<Secret>(
    o,
    async (c) => {
      try {
        return await c.json<Secret>('POST', `/api/v1/api-keys/${encodeURIComponent(id)}/rotate`);
      } catch (e) {
        throw (e as KilnError).code === 'NOT_FOUND' ? noKey(id) : e;
      }
    },
    async (db) => {
      const { rotateKey } = await import('../../../daemon/accounts/keys.js');
      const { resolveAccountsConfig } = await import('../../../daemon/accounts/config.js');
      const grace = resolveAccountsConfig(process.env).apiKeyRotateGraceS * 1000;
      const k = await rotateKey(db, a.OPERATOR, id, grace).catch((e: KilnError) => {
        throw e.code === 'NOT_FOUND' ? noKey(id) : e;
      });
      await a.audit(db, 'key.rotate', id, { previousKeyValidUntil: k.previousKeyValidUntil });
      return k;
    },
  );
  a.out(
    o,
    r,
    `${r.key}\nRotated ${r.id}: the previous secret keeps working until ${r.previousKeyValidUntil}. The new one is shown only now.\n`,
  );
}

async function keysList(o: AdminOptions & Opts): Promise<void> {
  const a = await admin();
  const keys = await a.either<KeyView[]>(
    o,
    // The server lists everyone's keys for an admin and the caller's own for anyone else.
    async (c) => (await c.json<{ keys: KeyView[] }>('GET', '/api/v1/api-keys?all=true')).keys,
    async (db) => {
      const { listApiKeys } = await import('../../../daemon/store/api-keys.js');
      const { keyViews } = await import('../../../daemon/accounts/keys.js');
      return (await keyViews(db, await listApiKeys(db), true)) as unknown as KeyView[];
    },
  );
  const shown = o.user ? keys.filter((k) => k.owner?.username === o.user) : keys;
  const rows = shown.map(
    (k) =>
      `${k.id}  ${(k.owner?.username ?? '-').padEnd(16)} ${k.name.slice(0, 24).padEnd(24)} ${k.prefix}…  last used ${k.lastUsedAt ?? 'never'}${k.expiresAt ? `  ${k.expired ? 'expired' : 'expires'} ${k.expiresAt}` : ''}\n`,
  );
  a.out(
    o,
    shown,
    rows.length ? `${'ID'.padEnd(24)}  ${'OWNER'.padEnd(16)} ${'NAME'.padEnd(24)} PREFIX\n${rows.join('')}` : 'No API keys.\n',
  );
}

export function addKeysCommand(program: Command): void {
  const keys = program
    .command('keys')
    .description('API keys: create, rotate, revoke, list (on a server, or on the local data dir with an admin’s authority)');
  target(
    keys
      .command('create')
      .description('create an API key (printed once); --user: for a service account (admin)')
      .argument('<name>', 'a name to recognise the key by')
      .option('--user <username>', 'the service account the key is for (admin; required on the data dir)')
      .option('--expires-in-days <days>', 'lifetime in days (default: none, or the expiry of the key you use)'),
  ).action(async (name: string, o: Opts) => keysCreate(name, o));
  target(
    keys
      .command('rotate')
      .description('give a key a new secret (printed once); the old one works for API_KEY_ROTATE_GRACE_S more (default 1 h)')
      .argument('<id>'),
  ).action(async (id: string, o: Opts) => keysRotate(id, o));
  target(keys.command('revoke').description('revoke an API key by id').argument('<id>')).action(async (id: string, o: Opts) =>
    (await admin()).keysRevoke(id, o),
  );
  target(keys.command('list').description('list API keys (never the secrets)').option('--user <username>', "only this user's keys")).action(
    async (o: Opts) => keysList(o),
  );
}
