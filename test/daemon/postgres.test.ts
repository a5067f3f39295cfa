/**
 * The store and routes suite again, on PostgreSQL: each server gets its own schema (dropped after).
 * KILN_TEST_PG_URL overrides the database; the suite is skipped when none answers.
 */
import { test } from 'node:test';

const base = process.env.KILN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function reachable(): Promise<string | undefined> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: base, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('select 1');
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await c.end().catch(() => {});
  }
}

const problem = await reachable();
if (problem) {
  test('daemon suite on PostgreSQL', { skip: `PostgreSQL not reachable at ${base}: ${problem}` }, () => {});
} else {
  process.env.KILN_TEST_PG = base;
  await import('./api.test.js');
}
