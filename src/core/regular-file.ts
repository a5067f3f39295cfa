/**
 * The one check of a file named as an input, wherever it is read (a local run, an upload to a server,
 * the file library): the same mistake gets the same error and exit code everywhere.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { KilnError } from './errors.js';

export async function regularFile(p: string): Promise<Stats> {
  const st = await stat(p).catch(() => undefined);
  if (!st)
    throw new KilnError(
      'NOT_FOUND',
      // Node decodes arguments as UTF-8: a name in another encoding (Latin-1 on an old disk) arrives
      // with U+FFFD in place of its bytes and names no file, though `ls` shows one.
      p.includes('\uFFFD')
        ? `No such file: ${p}. Its name is not valid UTF-8 (shown with \uFFFD), and kiln reads names as UTF-8: rename it, e.g. \`convmv -f latin1 -t utf-8 --notest FILE\`.`
        : `No such file: ${p}`,
    );
  if (!st.isFile())
    throw new KilnError(
      'UNSUPPORTED_INPUT',
      st.isDirectory()
        ? `${p} is not a regular file but a directory: name its files (${p.replace(/\/+$/, '')}/*.jpg), or run \`kiln watch\` on it.`
        : `${p} is not a regular file.`,
    );
  return st;
}
