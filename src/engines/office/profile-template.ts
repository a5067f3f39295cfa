/**
 * An initialised LibreOffice profile kept between runs. soffice.bin meeting a fresh profile fills it in
 * and exits for a restart (the `--terminate_after_init` pass in instance.ts): ~0.3 s of every CLI
 * conversion and of the daemon's first one. The first run keeps a copy of its profile's `user/`
 * directory once that pass is done; later runs copy it into their own new profile (~5 ms for its ~30
 * files) and skip the pass.
 *
 * The copy lives in kiln-cache-<uid> in the OS temp dir, which only this user may change
 * (core/private-dir.ts; a run's own files never go there), under a name made from
 * the seeded settings and the LibreOffice binary (path, size, time): other settings or another
 * LibreOffice make another copy. One is used only if it still holds every macro setting the seed locks
 * down, as the first-start pass leaves them.
 */
import { randomBytes, createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ownDir, trustedDir } from '../../core/private-dir.js';

/** kiln's caches that are neither compiled code nor a run's files, per user, in the OS temp dir. */
export function cacheRoot(): string {
  return path.join(tmpdir(), `kiln-cache-${process.getuid?.() ?? 'user'}`);
}

/**
 * Where the copy of the profile made from `seed` for `bin` is kept; undefined when no trusted place is
 * at hand. `make`: create the private root when missing (a lookup alone never does).
 */
async function templateDir(bin: string, seed: string, make: boolean): Promise<string | undefined> {
  const root = make ? trustedDir(cacheRoot()) : ownDir(cacheRoot()) ? cacheRoot() : undefined;
  if (!root) return undefined;
  const st = await stat(bin);
  const key = createHash('sha256').update([seed, bin, st.size, st.mtimeMs].join('\0')).digest('hex').slice(0, 16);
  return path.join(root, `office-profile-${key}`);
}

/** The seed's macro settings, each a line the first-start pass keeps as it is. */
function lockdownLines(seed: string): string[] {
  return seed.split('\n').filter((l) => l.includes('/Security/Scripting'));
}

/** Fills `profileDir`'s `user/` from the kept copy; false when there is none to use (the caller initialises). */
export async function restoreProfile(profileDir: string, bin: string, seed: string): Promise<boolean> {
  try {
    const dir = await templateDir(bin, seed, false);
    if (!dir || !existsSync(path.join(dir, 'user', 'config'))) return false;
    const xcu = await readFile(path.join(dir, 'user', 'registrymodifications.xcu'), 'utf8');
    if (!lockdownLines(seed).every((l) => xcu.includes(l))) return false;
    await cp(path.join(dir, 'user'), path.join(profileDir, 'user'), { recursive: true, force: true });
    return existsSync(path.join(profileDir, 'user', 'config'));
  } catch {
    return false;
  }
}

/** Keeps a copy of `profileDir`'s initialised `user/` for later runs; best effort (a full disk keeps none). */
export async function keepProfile(profileDir: string, bin: string, seed: string): Promise<void> {
  let tmp: string | undefined;
  try {
    const dir = await templateDir(bin, seed, true);
    if (!dir || existsSync(dir)) return;
    // Made aside and renamed into place: a run beside this one never copies half a profile.
    tmp = `${dir}.${randomBytes(6).toString('hex')}.tmp`;
    await cp(path.join(profileDir, 'user'), path.join(tmp, 'user'), { recursive: true });
    await rename(tmp, dir);
    tmp = undefined;
  } catch {
    /* another run kept one first, or the disk is full: the next run initialises again */
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}
