/**
 * The one check of a file named as an input, wherever it is read (a local run, an upload to a server,
 * the file library): the same mistake gets the same error and exit code everywhere.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { KilnError } from './errors.js';

export async function regularFile(p: string): Promise<Stats> {
  const st = await stat(p).catch(() => undefined);
  if (!st) throw new KilnError('NOT_FOUND', `No such file: ${p}`);
  if (!st.isFile()) throw new KilnError('UNSUPPORTED_INPUT', `${p} is not a regular file.`);
  return st;
}
