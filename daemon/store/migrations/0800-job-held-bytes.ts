/**
 * Issue #17: the quota's reading of what a user's finished jobs hold, kept by the database instead of
 * summed on every upload. The sum (jobs_owner_held, an index-only scan) visited every output the user
 * still held: 0.16 ms a request at 2000 outputs, growing with them — a script that sends one request a
 * second holds ~86 000 outputs under the default 24-hour TTL, and on SQLite that sum runs on the event
 * loop. `job_held_bytes` has one row per owner, kept by triggers on every write to `jobs` (insert,
 * the update of a column that decides whether and how much a row holds, delete — the sweep, a job or
 * user removed), so no code path can forget it; its reading is one primary-key lookup.
 *
 * A row holds its processed_size when its output is still there (output_path set) and it has ended
 * (status neither queued nor running): the same condition the sum had.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const HELD = (row: 'NEW' | 'OLD') => `${row}.output_path IS NOT NULL AND ${row}.status NOT IN ('queued', 'running')`;
const ADD_NEW = `INSERT INTO job_held_bytes (owner_id, bytes) VALUES (NEW.owner_id, COALESCE(NEW.processed_size, 0))
  ON CONFLICT (owner_id) DO UPDATE SET bytes = job_held_bytes.bytes + excluded.bytes`;
const TAKE_OLD = 'UPDATE job_held_bytes SET bytes = bytes - COALESCE(OLD.processed_size, 0) WHERE owner_id = OLD.owner_id';
/** The columns whose change can change what a row holds: a progress write fires nothing. */
const COLUMNS = 'status, output_path, processed_size, owner_id';

const SQLITE_TRIGGERS = [
  `CREATE TRIGGER jobs_held_insert AFTER INSERT ON jobs WHEN ${HELD('NEW')} BEGIN ${ADD_NEW}; END`,
  // Two triggers on update, each with its own condition; SQLite runs the one made first first (either order sums alike).
  `CREATE TRIGGER jobs_held_update_old AFTER UPDATE OF ${COLUMNS} ON jobs WHEN ${HELD('OLD')} BEGIN ${TAKE_OLD}; END`,
  `CREATE TRIGGER jobs_held_update_new AFTER UPDATE OF ${COLUMNS} ON jobs WHEN ${HELD('NEW')} BEGIN ${ADD_NEW}; END`,
  `CREATE TRIGGER jobs_held_delete AFTER DELETE ON jobs WHEN ${HELD('OLD')} BEGIN ${TAKE_OLD}; END`,
];

const POSTGRES_FUNCTION = `CREATE FUNCTION kiln_jobs_held() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND ${HELD('OLD')} THEN ${TAKE_OLD}; END IF;
  IF TG_OP <> 'DELETE' AND ${HELD('NEW')} THEN ${ADD_NEW}; END IF;
  RETURN NULL;
END $$`;
const POSTGRES_TRIGGERS = [
  'CREATE TRIGGER jobs_held_insert AFTER INSERT OR DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION kiln_jobs_held()',
  `CREATE TRIGGER jobs_held_update AFTER UPDATE OF ${COLUMNS} ON jobs FOR EACH ROW EXECUTE FUNCTION kiln_jobs_held()`,
];

const isPostgres = (db: AnyDb) => db.getExecutor().adapter instanceof PostgresAdapter;

const migration: NamedMigration = {
  name: '0800_job_held_bytes',
  async up(db: AnyDb) {
    await db.schema
      .createTable('job_held_bytes')
      .addColumn('owner_id', 'text', (c) => c.primaryKey())
      .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    // What the jobs written before hold; the triggers keep it from here on.
    await sql`INSERT INTO job_held_bytes (owner_id, bytes)
      SELECT owner_id, COALESCE(SUM(processed_size), 0) FROM jobs
      WHERE output_path IS NOT NULL AND status NOT IN ('queued', 'running') GROUP BY owner_id`.execute(db);
    const statements = isPostgres(db) ? [POSTGRES_FUNCTION, ...POSTGRES_TRIGGERS] : SQLITE_TRIGGERS;
    for (const s of statements) await sql.raw(s).execute(db);
    // The sum's index (0740) served nothing else; every job write kept it up to date.
    await db.schema.dropIndex('jobs_owner_held').ifExists().execute();
  },
  async down(db: AnyDb) {
    const postgres = isPostgres(db);
    for (const t of postgres
      ? ['jobs_held_insert', 'jobs_held_update']
      : ['jobs_held_insert', 'jobs_held_update_old', 'jobs_held_update_new', 'jobs_held_delete'])
      await sql.raw(`DROP TRIGGER IF EXISTS ${t}${postgres ? ' ON jobs' : ''}`).execute(db);
    if (postgres) await sql.raw('DROP FUNCTION IF EXISTS kiln_jobs_held()').execute(db);
    await db.schema.dropTable('job_held_bytes').ifExists().execute();
    await db.schema
      .createIndex('jobs_owner_held')
      .ifNotExists()
      .on('jobs')
      .columns(['owner_id', 'status', 'processed_size'])
      .where(sql.ref('output_path'), 'is not', null)
      .execute();
  },
};

export default migration;
