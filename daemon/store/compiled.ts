/**
 * The hot queries (the job's insert, claim, progress, finish and read by id; the credentials version and
 * the quota's readings) run on every request; building them with kysely and compiling the tree to SQL
 * costs about as much as running them on SQLite. Here each one is compiled once per query shape and
 * database (the SQL text differs between SQLite and PostgreSQL), and later calls send that text with the
 * new values. The first compile checks that the values it produced are exactly the ones the caller
 * lists, in order; a shape that does not pass is never cached (it is then built and compiled every time,
 * as before), so a change to a query cannot bind values to the wrong places.
 */
import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.js';

const texts = new WeakMap<Kysely<Database>, Map<string, string | null>>();

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

/**
 * Runs the query `build()` makes, whose bound values are `values` in order; `shape` names everything
 * else that changes the SQL text (e.g. which columns a patch sets). Shapes are one namespace per database
 * whatever module runs them, and a known shape is sent without building its query: each starts with
 * the table it reads or writes (`jobs.get`, `job_held_bytes.read`), so two modules cannot share a name.
 */
export async function runCompiled<R>(
  db: Kysely<Database>,
  shape: string,
  values: readonly unknown[],
  build: () => Compilable<R>,
): Promise<QueryResult<R>> {
  let known = texts.get(db);
  if (!known) texts.set(db, (known = new Map()));
  const text = known.get(shape);
  if (text) return db.executeQuery<R>(CompiledQuery.raw(text, [...values]));
  const compiled = build().compile();
  if (text === undefined) known.set(shape, sameValues(compiled.parameters, values) ? compiled.sql : null);
  return db.executeQuery<R>(compiled);
}
