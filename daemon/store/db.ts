/**
 * Opens the record store: SQLite in the data dir by default, PostgreSQL when DATABASE_URL is set.
 * Both run the same migrations and the same kysely queries.
 */
import path from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { makeDir } from '../../src/core/make-dir.js';
import { VERSION } from '../../src/core/version.js';
import { MIGRATIONS, migrationProvider } from './migrations.js';
import type { Database } from './schema.js';
import { cachingDatabase } from './statement-cache.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  kind: StoreKind;
  /** Cheap round trip; throws when the database is unusable. */
  ping(): Promise<void>;
  /**
   * SQLite: copies what the write-ahead log holds into the database file now, for a moment nobody waits
   * (see openSqlite); PostgreSQL checkpoints on its own. Never waits for another connection's readers or
   * writers (PASSIVE), never throws.
   */
  checkpoint(): void;
  close(): Promise<void>;
}

/** The SQLite database's file name in the data dir. */
export const SQLITE_FILE = 'kiln.db';

export async function openStore(opts: { dataDir: string; databaseUrl?: string; migrate?: boolean }): Promise<Store> {
  const store = opts.databaseUrl ? await openPostgres(opts.databaseUrl) : await openSqlite(opts.dataDir);
  if (opts.migrate === false) return store;
  try {
    // kysely looks for its bookkeeping tables in every schema; pin them to ours so several kiln
    // schemas in one PostgreSQL database (one per deployment or test) do not see each other's.
    const schema =
      store.kind === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0]?.s : undefined;
    await refuseNewerSchema(store);
    const migrator = new Migrator({ db: store.db, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
    let { error, results } = await migrator.migrateToLatest();
    // kysely's migrator introspects every schema of the database; another deployment dropping its schema
    // at that moment makes the introspection fail with "schema … does not exist". Our schema is intact:
    // trying again is safe (applied migrations are recorded and skipped).
    for (let i = 0; error && store.kind === 'postgres' && /does not exist/i.test(String((error as Error).message)) && i < 5; i++) {
      await new Promise((r) => setTimeout(r, 100 * (i + 1)));
      ({ error, results } = await migrator.migrateToLatest());
    }
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new KilnError('UNAVAILABLE', `Database migration ${failed ?? ''} failed: ${(error as Error).message ?? error}`, {
        cause: error,
      });
    }
  } catch (e) {
    await store.close();
    throw e instanceof KilnError ? e : new KilnError('UNAVAILABLE', `The database is unusable: ${(e as Error).message}`, { cause: e });
  }
  return store;
}

async function openSqlite(dataDir: string): Promise<Store> {
  await makeDir(dataDir);
  const { default: BetterSqlite } = await import('better-sqlite3');
  const raw = new BetterSqlite(path.join(dataDir, SQLITE_FILE));
  // WAL lets readers run while a job row is updated; busy_timeout covers a second process on the file.
  // A checkpoint (SQLite's own after every 1000 pages of log, on the commit that passes them) syncs the
  // log and the database file: 16–20 ms of the event loop each on these machines' disks, one every ~60
  // small jobs. The daemon also checkpoints when its jobs pause (checkpoint(), server.ts), so a burst of
  // requests starts on an empty log and meets SQLite's own only past those 1000 pages.
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // SQLite's own lower() folds ASCII only, so the library's case-insensitive name filter missed "Über"
  // for "über" (and even for "Über": the query is folded by JS). JavaScript's folding, as PostgreSQL's
  // lower() does under a UTF-8 locale. Usernames are ASCII, where both agree.
  raw.function('lower', { deterministic: true }, (v: unknown) => (v === null || v === undefined ? null : String(v).toLowerCase()));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingDatabase(raw) }) });
  return {
    db,
    kind: 'sqlite',
    async ping() {
      if (!raw.open) throw new Error('database closed');
      raw.prepare('select 1').get();
    },
    checkpoint() {
      try {
        if (raw.open) raw.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // Busy or closing: the next quiet moment, or SQLite's own checkpoint, does it.
      }
    },
    async close() {
      await db.destroy();
    },
  };
}

async function openPostgres(url: string): Promise<Store> {
  // pg reads any URL as PostgreSQL's: `mysql://…` or `sqlite:///…` became a connection to the host it
  // names (or localhost) and failed later as "the database is unusable", exit 1.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim())?.[1];
  // Only the scheme is echoed: the rest may hold a password.
  if (!/^(postgres|postgresql|socket)$/i.test(scheme ?? ''))
    throw new KilnError(
      'USAGE_ERROR',
      `DATABASE_URL must be a PostgreSQL URL (postgres://user:password@host:5432/database), not ${scheme ? `a ${scheme}: URL` : 'a path'}; unset it to use SQLite in the data dir.`,
    );
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // bigint columns hold epoch-ms timestamps and sizes, all well inside the safe integer range.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not crash the daemon; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'postgres',
    async ping() {
      await sql`select 1`.execute(db);
    },
    checkpoint() {},
    async close() {
      await db.destroy();
    },
  };
}

/** Names of the migrations this database has applied (none for a new one). */
export async function appliedMigrations(store: Store): Promise<string[]> {
  try {
    const r = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
    return r.rows.map((x) => x.name);
  } catch {
    return [];
  }
}

/** Migrations this kiln would apply on start: what `kiln admin migrate --dry-run` lists. */
export async function pendingMigrations(store: Store): Promise<string[]> {
  const applied = new Set(await appliedMigrations(store));
  return MIGRATIONS.map((m) => m.name).filter((n) => !applied.has(n));
}

/**
 * A database a newer kiln has migrated is left alone: running old code on it could corrupt it. The way
 * back from an upgrade is the backup taken before it (docs/OPERATIONS.md).
 */
export async function refuseNewerSchema(store: Store): Promise<void> {
  const known = new Set(MIGRATIONS.map((m) => m.name));
  const unknown = (await appliedMigrations(store)).filter((n) => !known.has(n));
  if (unknown.length)
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `This database was upgraded by a newer kiln (migration${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}); kiln ${VERSION} cannot run on it. Start the newer version, or restore the backup taken before the upgrade (docs/OPERATIONS.md).`,
      { reason: 'database-newer-than-kiln' },
    );
}
