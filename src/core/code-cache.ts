/**
 * Runs a CommonJS file with V8's code cache kept between runs: what node ≥ 22 does for every module
 * with `module.enableCompileCache`, which node 20 lacks. The CLI bundle (scripts/bundle.mjs) puts zod,
 * commander and sharp's JavaScript into one such file (dist/bundle/vendor.cjs, ~720 kB): compiling them
 * was the largest part of a `kiln resize` above what a script that imports sharp pays (zod alone 24 ms
 * of 36–50 on a slow machine). With the cache, V8 takes the compiled code instead of parsing the source.
 *
 * The cache follows node's own settings: it lives in `$NODE_COMPILE_CACHE/kiln` (else the OS temp dir's
 * `node-compile-cache/kiln`), and NODE_DISABLE_COMPILE_CACHE=1 turns it off. V8 runs whatever code a
 * cache file holds, so one is used only from a directory that this user owns and nobody else can write
 * to (no other account can put a file there or rename one in). A cache V8 refuses (another node, other
 * flags) or that is missing is written anew when the process ends, to a temporary name first: parallel
 * runs never read half a file.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Script } from 'node:vm';

/** How the code of a file was had: from the cache, compiled (and cached at exit), or compiled with the cache off. */
export type CodeCacheOutcome = 'cached' | 'compiled' | 'uncached';

const loaded = new Map<string, { exports: unknown; outcome: CodeCacheOutcome }>();

/** The directory of kiln's cache files, or undefined when the cache is off. */
function codeCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE === '1') return undefined;
  return path.join(env.NODE_COMPILE_CACHE || path.join(os.tmpdir(), 'node-compile-cache'), 'kiln');
}

/** Whether `st` belongs to this user and nobody else can write to it. */
function ownedAlone(st: { uid: number; mode: number }): boolean {
  return (st.mode & 0o022) === 0 && (process.getuid === undefined || st.uid === process.getuid());
}

/** Whether `dir` (not a link) belongs to this user and only this user can change what is in it. */
function ownDir(dir: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  return st?.isDirectory() === true && ownedAlone(st);
}

/** The cache file's bytes, if it exists and is this user's alone (checked on the open file itself). */
function readOwnFile(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined; // not made yet
  }
  try {
    const st = fstatSync(fd);
    return st.isFile() && ownedAlone(st) ? readFileSync(fd) : undefined;
  } finally {
    closeSync(fd);
  }
}

/** The directory, made private when missing; undefined when it cannot be trusted or made. */
function trustedDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  return ownDir(dir) ? dir : undefined;
}

/**
 * The cache file of `file` as it is now: a new build (size, time), another node or other node options
 * name another file. V8 refuses a cache made under other flags, and `kiln serve` runs with a flag of its
 * own (bin/kiln: --max-semi-space-size): one shared file would be rewritten by the daemon and the CLI
 * in turn, each then compiling again.
 */
function cacheName(file: string, size: number, mtimeMs: number): string {
  const key = [file, size, mtimeMs, process.version, process.arch, process.execArgv.join(' '), process.env.NODE_OPTIONS ?? ''].join('\0');
  return `${path.basename(file)}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.v8`;
}

/** `require(file)` of a CommonJS file, with its compiled code cached as above. Loaded once per process. */
export function requireCached(file: string): unknown {
  const done = loaded.get(file);
  if (done) return done.exports;
  const fd = openSync(file, 'r');
  let source: string;
  let size: number;
  let mtimeMs: number;
  try {
    ({ size, mtimeMs } = fstatSync(fd));
    source = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const dirName = codeCacheDir(process.env);
  const dir = dirName === undefined ? undefined : trustedDir(dirName);
  const cacheFile = dir === undefined ? undefined : path.join(dir, cacheName(file, size, mtimeMs));
  const cachedData = cacheFile === undefined ? undefined : readOwnFile(cacheFile);
  // CommonJS's function wrapper, as node's own loader puts it around a file (one line: positions in stack traces stay right).
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename: file, cachedData });
  const outcome: CodeCacheOutcome = !cacheFile ? 'uncached' : cachedData && !script.cachedDataRejected ? 'cached' : 'compiled';
  const module = { exports: {} as unknown };
  // A file that throws is not recorded: the next call runs it again, as require() does.
  (script.runInThisContext() as (...a: unknown[]) => void).call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    path.dirname(file),
  );
  loaded.set(file, { exports: module.exports, outcome });
  // At exit, so the cache also holds the functions this run compiled on first call (V8 compiles lazily).
  if (outcome === 'compiled') process.once('exit', () => writeCache(script, cacheFile!));
  return module.exports;
}

function writeCache(script: Script, cacheFile: string): void {
  // Random: worker threads of one process share its pid, and each may write the same cache at its exit.
  const tmp = `${cacheFile}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, cacheFile);
  } catch {
    // A full or read-only disk costs the next run its compile time, nothing else.
    try {
      rmSync(tmp, { force: true });
    } catch {
      /* left to the temp dir's cleaning */
    }
  }
}

/** How `file` was loaded in this process (for tests), or undefined if it was not. */
export function codeCacheOutcome(file: string): CodeCacheOutcome | undefined {
  return loaded.get(file)?.outcome;
}
