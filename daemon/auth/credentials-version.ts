/**
 * A counter in the database that every change to credentials bumps (a key revoked or rotated, a user
 * deleted, disabled, demoted or given a new password). Each instance, and the offline `kiln admin`
 * commands working on a running daemon's data dir, share it: an instance compares it with the value its
 * key cache was filled under on every request, and empties the cache when it moved. One primary-key read
 * per request, instead of a cache that outlives a deletion.
 */
import type { Kysely } from 'kysely';
import { runCompiled } from '../store/compiled.js';
import type { Database } from '../store/schema.js';

export async function credentialsVersion(db: Kysely<Database>): Promise<number> {
  const r = await runCompiled(db, 'credentials_version.read', [1], () =>
    db.selectFrom('credentials_version').select('version').where('id', '=', 1),
  );
  return Number(r.rows[0]?.version ?? 0);
}

export async function bumpCredentials(db: Kysely<Database>): Promise<void> {
  await db
    .updateTable('credentials_version')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('id', '=', 1)
    .execute();
}
