/**
 * The store and routes suite again, on PostgreSQL: each server gets its own schema (dropped after).
 * KILN_TEST_PG_URL overrides the database; the suite is skipped when none answers.
 */
import { test } from 'node:test';
import { pgUnavailable, TEST_PG_URL } from '../helpers/scale.js';

const base = TEST_PG_URL;

const problem = await pgUnavailable(base);
if (problem) {
  test('daemon suite on PostgreSQL', { skip: problem }, () => {});
} else {
  process.env.KILN_TEST_PG = base;
  await import('./api.test.js');
}
