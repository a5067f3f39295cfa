/**
 * Retention of the rows accounts write on every attempt (#21.12): failed logins leave audit events and
 * throttle counters per attempted username, so without pruning anyone could grow the database at will.
 * Run by the job sweeper on each round (daemon/jobs/upkeep.ts → deleteExpiredSessions).
 *
 * - audit events older than AUDIT_RETENTION_DAYS (default 365);
 * - throttle and rate-limit counters untouched for THROTTLE_RETENTION_DAYS (default 2, longer than a
 *   pair's lock memory of a day), never one whose lock is still running;
 * - revoked and rotated-out API keys (kept so a client learns why its key stopped) after AUDIT_RETENTION_DAYS;
 * - library items and pipelines of users deleted while they were committing.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { AccountsConfig } from './config.js';
import { deleteOrphans } from './users.js';

const DAY_MS = 86_400_000;

export interface Pruned {
  audit: number;
  throttle: number;
  keys: number;
  files: number;
  pipelines: number;
}

export async function pruneAccounts(db: Kysely<Database>, c: AccountsConfig, sharedDir: string, now = Date.now()): Promise<Pruned> {
  const auditBefore = now - c.auditRetentionDays * DAY_MS;
  const throttleBefore = now - c.throttleRetentionDays * DAY_MS;
  const audit = await db.deleteFrom('audit_events').where('at', '<', auditBefore).executeTakeFirst();
  const throttle = await db
    .deleteFrom('login_throttle')
    .where('first_at', '<', throttleBefore)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', throttleBefore)]))
    .executeTakeFirst();
  const keys = await db
    .deleteFrom('api_keys')
    .where((eb) =>
      eb.or([
        eb.and([eb('revoked_at', 'is not', null), eb('revoked_at', '<', auditBefore)]),
        eb.and([eb('replaced_by', 'is not', null), eb('valid_until', '<', auditBefore)]),
      ]),
    )
    .executeTakeFirst();
  const orphans = await deleteOrphans(db, sharedDir);
  return {
    audit: Number(audit.numDeletedRows),
    throttle: Number(throttle.numDeletedRows),
    keys: Number(keys.numDeletedRows),
    ...orphans,
  };
}
