/**
 * Directories only this user can change, for caches whose contents kiln trusts as its own: compiled code
 * that V8 runs (code-cache.ts), a LibreOffice profile whose settings lock macros down
 * (engines/office/profile-template.ts). Another account that could write there could make kiln run
 * anything, so a directory that is a link, someone else's, or writable by group or others is not used.
 */
import { lstatSync, mkdirSync } from 'node:fs';

/** Whether `st` belongs to this user and nobody else can write to it. */
export function ownedAlone(st: { uid: number; mode: number }): boolean {
  return (st.mode & 0o022) === 0 && (process.getuid === undefined || st.uid === process.getuid());
}

/** Whether `dir` (not a link) belongs to this user and only this user can change what is in it. */
export function ownDir(dir: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  return st?.isDirectory() === true && ownedAlone(st);
}

/** The directory, made private when missing; undefined when it cannot be trusted or made. */
export function trustedDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  return ownDir(dir) ? dir : undefined;
}
