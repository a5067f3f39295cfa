/**
 * The folders a local MCP server may read and write (`kiln mcp`): an agent names paths, and without a
 * boundary it could have any file the user can read converted and handed back (/etc/passwd as a PDF,
 * ~/.ssh keys as text). The roots are, in order: the `--root` folders given on the command line; else
 * the client's roots (MCP `roots/list`, file:// URIs) when it declares them; else the working
 * directory, unless that is the file system's root. Paths are compared after resolving symbolic links,
 * so a link inside a root that points out of it is refused too.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KilnError } from '../core/errors.js';
import { realPath } from '../core/paths.js';

function within(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

/** The working directory as the default root; none when it is `/` (a client that starts servers there). */
export function defaultRoots(cwd = process.cwd()): string[] {
  return path.parse(cwd).root === cwd ? [] : [cwd];
}

/**
 * file:// URIs of a client's roots as folders. Other schemes, a network share (file://host/…) and a URI
 * that does not decode are no local folder and are left out: one of them failed every call with
 * INTERNAL, the client's other roots included, until the client changed its roots.
 */
export function rootsFromUris(uris: string[]): string[] {
  const folders: string[] = [];
  for (const u of uris) {
    if (!u.startsWith('file://')) continue;
    try {
      folders.push(fileURLToPath(u));
    } catch {
      // Not a folder of this machine.
    }
  }
  return folders;
}

/** Throws FORBIDDEN unless `p` (an input, second file or output) lies inside one of `roots`. */
export function checkInRoots(roots: string[], p: string, what: string): void {
  const real = realPath(p);
  if (roots.some((r) => within(realPath(r), real))) return;
  throw new KilnError(
    'FORBIDDEN',
    `${what} ${p} is outside the folders this MCP server may use (${roots.length ? roots.join(', ') : 'none'}): ` +
      'add its folder to the client’s roots, or start `kiln mcp --root DIR`.',
    { details: [{ path: what, message: 'outside the allowed roots' }] },
  );
}
