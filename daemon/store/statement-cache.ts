/**
 * better-sqlite3 behind kysely prepares every statement anew: kysely's SQLite driver calls `prepare(sql)`
 * for each query, and SQLite parses and plans it each time (a tenth of a millisecond or more per
 * statement, on every request). This wrapper hands back the Statement prepared earlier for the same SQL
 * text. Safe because kysely runs one query at a time on its single SQLite connection (a statement being
 * iterated is never handed out twice), SQLite re-prepares a cached statement itself when the schema
 * changes, and values are bound per call. Bounded: SQL with variable-length lists (`in (?, ?, …)`) makes
 * new texts, so the least recently used statement goes once `max` are kept.
 */
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export function cachingDatabase(raw: SqliteDatabase, max = 256): SqliteDatabase & { cachedStatements(): number } {
  const statements = new Map<string, SqliteStatement>();
  return {
    prepare(sql: string): SqliteStatement {
      const hit = statements.get(sql);
      if (hit) {
        // Map order is insertion order: moving a hit to the end keeps the eviction least-recently-used.
        statements.delete(sql);
        statements.set(sql, hit);
        return hit;
      }
      const stmt = raw.prepare(sql);
      statements.set(sql, stmt);
      if (statements.size > max) statements.delete(statements.keys().next().value!);
      return stmt;
    },
    close() {
      statements.clear();
      raw.close();
    },
    cachedStatements: () => statements.size,
  };
}
