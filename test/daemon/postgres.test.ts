/**
 * The store and routes suite again, on PostgreSQL: each server gets its own schema (dropped after).
 * KILN_TEST_PG_URL overrides the database; the suite is skipped when none answers.
 */
import { test } from 'node:test';
import { pgUnavailable } from '../helpers/scale.js';

const base = process.env.KILN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const problem = await pgUnavailable(base);
if (problem) {
  test('daemon suite on PostgreSQL', { skip: problem }, () => {});
} else {
  process.env.KILN_TEST_PG = base;
  await import('./api.test.js');
}
