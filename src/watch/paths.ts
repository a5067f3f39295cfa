/** Where a watched folder's outputs may go: one rule for `kiln watch` and the daemon's watch folders. */
import path from 'node:path';
import { realPath } from '../core/paths.js';

/**
 * Whether `outDir` is `inDir` itself or a folder inside it: outputs written there are new files in the
 * folder. Compared where the files really land, symbolic links resolved: an output folder that is a
 * link into the watched one (or a watched folder reached through a link) fed every output back in.
 */
export function insideFolder(inDir: string, outDir: string): boolean {
  const rel = path.relative(realPath(inDir), realPath(outDir));
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

/** Whether the two name the same folder, links resolved. */
export function sameFolder(a: string, b: string): boolean {
  return realPath(a) === realPath(b);
}
