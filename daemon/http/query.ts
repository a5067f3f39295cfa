/**
 * Every query parameter of the API takes one value (the OpenAPI document has no array parameter), but
 * fastify's parser makes a repeated one (`?name=a&name=b`) an array: routes reading it as a string
 * failed with 500 (`q.name.toLowerCase is not a function`, an SQL error for `clientJobId`). A repeated
 * parameter is refused here, once for every route, as the client error it is.
 */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';

export function installSingleQueryValues(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query) return;
    const repeated = Object.entries(query).filter(([, v]) => Array.isArray(v));
    if (repeated.length)
      throw new KilnError(
        'VALIDATION_ERROR',
        `Each query parameter takes one value: ${repeated.map(([k, v]) => `${k} is given ${(v as unknown[]).length} times`).join(', ')}.`,
        { details: repeated.map(([k]) => ({ path: k, message: 'given more than once' })) },
      );
  });
}

/**
 * A whole-number query parameter (page, limit, offset…): `def` when absent, 400 when it is not a whole
 * number of at least `min`. An upper bound is the route's to apply (lists clamp to their largest page).
 */
export function intQuery(raw: string | undefined, name: string, def: number, min = 1): number {
  if (raw === undefined || raw === '') return def;
  // Digits only: Number() would also take "1e3", "0x10" or " 7".
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min))
    throw new KilnError('VALIDATION_ERROR', `${name} must be a whole number ≥ ${min} (got "${raw}").`, {
      details: [{ path: name, message: min === 0 ? 'expected a non-negative integer' : 'expected a positive integer' }],
    });
  return n;
}
