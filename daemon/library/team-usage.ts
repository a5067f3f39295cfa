/**
 * What a team's shared library holds: the distinct content of the `team` items whose owners are in the
 * team now (a version repeating content already counted costs nothing, as in quota.ts). Owners'
 * own quotas still count these items too; this is the figure a per-team limit is checked against.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

export async function teamUsage(db: Kysely<Database>, teamId: string): Promise<number> {
  const r = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('library_versions as v')
        .innerJoin('library_items as i', 'i.id', 'v.item_id')
        .innerJoin('users as u', 'u.id', 'i.owner_id')
        .innerJoin('library_blobs as b', 'b.hash', 'v.blob_hash')
        .where('u.team_id', '=', teamId)
        .where('i.scope', '=', 'team')
        .select(['b.hash', 'b.size'])
        .distinct()
        .as('d'),
    )
    .select((eb) => eb.fn.sum<number | string | null>('d.size').as('total'))
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}
