/** Where a watched folder's outputs may go: one rule for `kiln watch` and the daemon's watch folders. */
import path from 'node:path';

/** Whether `outDir` is `inDir` itself or a folder inside it: outputs written there are new files in the folder. */
export function insideFolder(inDir: string, outDir: string): boolean {
  const rel = path.relative(path.resolve(inDir), path.resolve(outDir));
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}
