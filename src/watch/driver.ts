/**
 * A hot folder, whatever runs the files: the CLI (`kiln watch`, through the local runner) and the daemon
 * (admin-configured folders, through jobs) both hand each complete file to `run` and leave the
 * bookkeeping here. A processed original moves to IN/.done/ (or stays, `keep`, remembered in
 * IN/.kiln-watch.json); a failed one to IN/.failed/ with `<name>.error.json` beside it. When the signal
 * aborts, no new file is taken and the runs in flight are awaited (they see the same signal): an
 * aborted run's original stays where it is. When the folder itself disappears, the runs in flight are
 * awaited and the drive fails with NOT_FOUND.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { FolderScanner } from './scanner.js';
import { makeDir } from '../core/make-dir.js';

export interface FolderRunResult {
  ok: boolean;
  /** Absolute path of the output, when the run wrote one (their folder when it wrote several). */
  output?: string;
  /** Absolute path of every file, when the run wrote several (pdf-to-image, split-pdf…). */
  outputs?: string[];
  data?: Record<string, unknown>;
  error?: { code: string; message: string; details?: unknown; reason?: string };
  jobId?: string;
}

export interface FolderLine extends Omit<FolderRunResult, 'output' | 'outputs'> {
  /** Path of the input relative to the folder. */
  input: string;
  output?: string;
  /** Every file written, when there are several: which files in the output folder are this input's. */
  outputs?: string[];
  movedTo?: string;
  ms: number;
}

export interface DriveOptions {
  inDir: string;
  recursive: boolean;
  keep: boolean;
  initial: boolean;
  jobs: number;
  stableMs: number;
  intervalMs: number;
  signal: AbortSignal;
  /** Runs one file; `rel` is its path relative to the folder (outputs mirror sub-folders with it). */
  run(file: string, rel: string): Promise<FolderRunResult>;
  /** One call per processed file (not for runs stopped by the signal). */
  onLine(line: FolderLine): void;
  onError(message: string): void;
  /** Called once the first scan is done: files that arrive from now on are new. */
  onStarted?(): void;
  /** Paths in lines are shown relative to this directory (default: absolute). */
  relativeTo?: string;
}

const STATE = '.kiln-watch.json';

export async function driveFolder(o: DriveOptions): Promise<{ processed: number; failed: number }> {
  const inDir = path.resolve(o.inDir);
  const kept = o.keep ? await readKept(inDir) : new Map<string, string>();
  const queue: string[] = [];
  const active = new Set<Promise<void>>();
  let processed = 0;
  let failed = 0;
  const show = (p: string) => (o.relativeTo ? path.relative(o.relativeTo, p) || p : p);
  // One write of the kept state at a time: runs ending together (-j) wrote the same temp file and renamed
  // it twice, and the second rename's ENOENT dropped that file's line. And one write for all the files
  // that ended meanwhile: each wrote the whole state once, n² bytes over a folder of n files (10 000
  // files, 8 GB). A caller waits for the next write that starts after it, which holds its entry.
  let writing: Promise<void> = Promise.resolve();
  let next: Promise<void> | undefined;
  const saveKept = (): Promise<void> =>
    (next ??= writing
      .catch(() => {})
      .then(() => {
        next = undefined;
        writing = writeKept(inDir, kept);
        return writing;
      }));

  const handle = async (file: string) => {
    const rel = path.relative(inDir, file);
    const started = Date.now();
    const before = await fingerprint(file).catch(() => undefined);
    const r = await o.run(file, rel);
    if (o.signal.aborted && !r.ok) return;
    // Deleted or moved away while it waited its turn (or during the run): nothing to process or to
    // move aside, and no failure of the folder's.
    if (!r.ok && !existsSync(file)) {
      scanner.forget(file);
      o.onError(`${rel} disappeared before it was processed.`);
      return;
    }
    // Written to during its run (a copy or a scanner that paused longer than the quiet period, then
    // went on): the run saw part of the file. Its output, made from that part, is removed and the file
    // stays; the scanner, which saw it change, hands it over again once it has been quiet. Moving it
    // to .done/ (or .failed/, when the part did not decode) left a truncated output for a whole file.
    if (before !== undefined && existsSync(file) && (await fingerprint(file).catch(() => before)) !== before) {
      if (r.ok) await removeOutputs(r);
      o.onError(`${rel} changed while it was processed: it is taken again once it stops changing.`);
      return;
    }
    const { output, outputs, ...rest } = r;
    const line: FolderLine = { ...rest, input: rel, ms: Date.now() - started };
    if (output) line.output = show(output);
    if (outputs) line.outputs = outputs.map(show);
    if (r.ok) {
      processed++;
      // Deleted or moved away during its run: the output is written all the same and reported; there is
      // only no original left to move or remember (renaming it failed with ENOENT and lost the line).
      const stillThere = existsSync(file);
      if (o.keep && stillThere) {
        kept.set(rel, await fingerprint(file));
        await saveKept();
        scanner.forget(file, true);
      } else {
        if (stillThere) line.movedTo = show(await moveAside(inDir, '.done', rel));
        scanner.forget(file);
      }
    } else {
      failed++;
      const dest = await moveAside(inDir, '.failed', rel);
      line.movedTo = show(dest);
      await writeFile(
        dest + '.error.json',
        JSON.stringify({ input: rel, at: new Date().toISOString(), error: r.error, jobId: r.jobId }, null, 2) + '\n',
      );
      scanner.forget(file);
    }
    o.onLine(line);
  };

  const pump = () => {
    while (!o.signal.aborted && active.size < o.jobs && queue.length) {
      const file = queue.shift()!;
      const p = handle(file)
        .catch((e) => o.onError(`${file}: ${(e as Error).message}`))
        .finally(() => {
          active.delete(p);
          pump();
        });
      active.add(p);
    }
  };

  /** Aborted when the folder itself has disappeared. */
  const gone = new AbortController();
  const scanner = new FolderScanner({
    dir: inDir,
    recursive: o.recursive,
    stableMs: o.stableMs,
    intervalMs: o.intervalMs,
    initial: o.initial,
    onReady: async (file) => {
      if (o.keep && kept.get(path.relative(inDir, file)) === (await fingerprint(file).catch(() => ''))) return;
      queue.push(file);
      pump();
    },
    onError: (e) => {
      // The folder itself is gone (deleted, renamed, unmounted): every scan would fail the same way,
      // so stop and say so once rather than log the error every interval forever.
      if (!statSync(inDir, { throwIfNoEntry: false })?.isDirectory()) gone.abort();
      else o.onError(`scanning ${inDir}: ${(e as Error).message}`);
    },
  });
  await scanner.start();
  if (!gone.signal.aborted) o.onStarted?.();
  await new Promise<void>((resolve) => {
    for (const s of [o.signal, gone.signal])
      if (s.aborted) resolve();
      else s.addEventListener('abort', () => resolve(), { once: true });
  });
  scanner.stop();
  await Promise.allSettled([...active]);
  if (gone.signal.aborted && !o.signal.aborted)
    throw new KilnError('NOT_FOUND', `The watched folder ${inDir} is gone (deleted or moved): stopped watching.`);
  return { processed, failed };
}

async function fingerprint(file: string): Promise<string> {
  const st = await stat(file);
  return `${st.size}:${st.mtimeMs}`;
}

/** The files a run wrote (never a folder: the output of a tool that writes several names theirs). */
async function removeOutputs(r: FolderRunResult): Promise<void> {
  const files = r.outputs ?? (r.output && statSync(r.output, { throwIfNoEntry: false })?.isFile() ? [r.output] : []);
  await Promise.all(files.map((f) => rm(f, { force: true })));
}

/** Moves IN/<rel> to IN/<bucket>/<rel>, never over an existing file (a later file of the same name). */
async function moveAside(inDir: string, bucket: string, rel: string): Promise<string> {
  const dest0 = path.join(inDir, bucket, rel);
  await makeDir(path.dirname(dest0));
  let dest = dest0;
  const ext = path.extname(dest0);
  for (let n = 2; existsSync(dest) || existsSync(dest + '.error.json'); n++)
    dest = `${dest0.slice(0, dest0.length - ext.length)}-${n}${ext}`;
  await rename(path.join(inDir, rel), dest);
  return dest;
}

/** The files remembered as processed, less those that are gone since (the state would only ever grow). */
async function readKept(inDir: string): Promise<Map<string, string>> {
  let entries: [string, string][];
  try {
    entries = Object.entries(JSON.parse(await readFile(path.join(inDir, STATE), 'utf8')) as Record<string, string>);
  } catch {
    return new Map();
  }
  const there = await Promise.all(
    entries.map(([rel]) =>
      stat(path.join(inDir, rel)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return new Map(entries.filter((_, i) => there[i]));
}

async function writeKept(inDir: string, kept: Map<string, string>): Promise<void> {
  const tmp = path.join(inDir, `${STATE}.tmp`);
  await writeFile(tmp, JSON.stringify(Object.fromEntries(kept)));
  await rename(tmp, path.join(inDir, STATE));
}
