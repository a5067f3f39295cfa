/** Users, sessions, API keys and jobs: the tables of the daemon core. */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against whatever schema the database has
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0001_core',
  async up(db: AnyDb) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('username', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text')
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();
    await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute();
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('base_tool', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('stage', 'text')
      .addColumn('result', 'text')
      .addColumn('error', 'text')
      .addColumn('client_job_id', 'text')
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('work_dir', 'text')
      .addColumn('output_path', 'text')
      .addColumn('output_name', 'text')
      .addColumn('content_type', 'text')
      .addColumn('original_size', 'bigint')
      .addColumn('processed_size', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .execute();
    await db.schema.createIndex('jobs_owner_created').on('jobs').columns(['owner_id', 'created_at']).execute();
    await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'instance_id']).execute();
    await db.schema.createIndex('jobs_finished').on('jobs').column('finished_at').execute();
  },
  async down(db: AnyDb) {
    for (const t of ['jobs', 'api_keys', 'sessions', 'users']) await db.schema.dropTable(t).ifExists().execute();
  },
};

export default migration;
