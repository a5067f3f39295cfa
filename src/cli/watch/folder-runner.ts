/**
 * `kiln watch`: runs one tool, preset or pipeline on every file that arrives in a folder, through the
 * local runner (same validation, naming and atomic outputs as `kiln <tool>`). A processed original moves
 * to IN/.done/ (or stays, --keep, remembered in IN/.kiln-watch.json); a failed one to IN/.failed/ with
 * `<name>.error.json` beside it. Stopping (Ctrl-C, SIGTERM) takes no new file and aborts the runs in
 * flight: their originals stay where they are and no output is half-written.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { toKilnError } from '../../core/errors.js';
import type { Tool } from '../../core/tool.js';
import { runLocal, type ItemResult } from '../local-runner.js';
import { FolderScanner } from './scanner.js';

export interface WatchOptions {
  inDir: string;
  outDir: string;
  tool: Tool;
  /** Shown in logs: the tool, preset or pipeline name. */
  name: string;
  settings: Record<string, unknown>;
  recursive: boolean;
  keep: boolean;
  initial: boolean;
  jobs: number;
  stableMs: number;
  intervalMs: number;
  json: boolean;
  quiet: boolean;
  signal: AbortSignal;
}

export interface WatchLine {
  input: string;
  ok: boolean;
  output?: string;
  movedTo?: string;
  data?: Record<string, unknown>;
  error?: { code: string; message: string; details?: unknown; reason?: string };
  ms: number;
}

const STATE = '.kiln-watch.json';

export async function watchFolder(o: WatchOptions): Promise<{ processed: number; failed: number }> {
  const inDir = path.resolve(o.inDir);
  const outDir = path.resolve(o.outDir);
  await mkdir(outDir, { recursive: true });
  const kept = o.keep ? await readKept(inDir) : new Map<string, string>();
  const queue: string[] = [];
  const active = new Set<Promise<void>>();
  let processed = 0;
  let failed = 0;
  const log = (line: string) => {
    if (!o.quiet) process.stderr.write(line + '\n');
  };

  const fingerprint = async (file: string) => {
    const { stat } = await import('node:fs/promises');
    const st = await stat(file);
    return `${st.size}:${st.mtimeMs}`;
  };

  const handle = async (file: string) => {
    const rel = path.relative(inDir, file);
    const started = Date.now();
    const results = await runLocal({
      tool: o.tool,
      name: o.name,
      inputs: [file],
      extra: {},
      settings: o.settings,
      // Mirrors sub-folders (--recursive) so equal names in two folders do not meet.
      output: path.join(outDir, path.dirname(rel)) + path.sep,
      quiet: true,
      silent: true,
      concurrency: 1,
      signal: o.signal,
    }).catch((e): ItemResult[] => {
      const err = toKilnError(e);
      return [{ input: file, ok: false, error: err.toJSON().error, exitCode: err.exitCode }];
    });
    const r = results[0];
    // Stopped mid-run: the original stays in place for the next start.
    if (o.signal.aborted || !r) return;
    const line: WatchLine = { input: rel, ok: r.ok, ms: Date.now() - started };
    if (r.ok) {
      processed++;
      if (r.output) line.output = path.relative(process.cwd(), r.output) || r.output;
      if (r.data) line.data = r.data;
      if (o.keep) {
        kept.set(rel, await fingerprint(file));
        await writeKept(inDir, kept);
        scanner.forget(file, true);
      } else {
        line.movedTo = path.relative(process.cwd(), await moveAside(inDir, '.done', rel));
        scanner.forget(file);
      }
      log(`kiln watch: ${rel} → ${line.output ?? 'done'} (${line.ms} ms)`);
    } else {
      failed++;
      line.error = r.error;
      const dest = await moveAside(inDir, '.failed', rel);
      line.movedTo = path.relative(process.cwd(), dest);
      await writeFile(
        dest + '.error.json',
        JSON.stringify({ input: rel, tool: o.name, at: new Date().toISOString(), error: r.error }, null, 2) + '\n',
      );
      scanner.forget(file);
      log(`kiln watch: ${rel} failed: ${r.error?.message} (moved to ${path.relative(inDir, dest)})`);
    }
    if (o.json) process.stdout.write(JSON.stringify(line) + '\n');
  };

  const pump = () => {
    while (!o.signal.aborted && active.size < o.jobs && queue.length) {
      const file = queue.shift()!;
      const p = handle(file)
        .catch((e) => log(`kiln watch: ${file}: ${(e as Error).message}`))
        .finally(() => {
          active.delete(p);
          pump();
        });
      active.add(p);
    }
  };

  const scanner = new FolderScanner({
    dir: inDir,
    recursive: o.recursive,
    stableMs: o.stableMs,
    intervalMs: o.intervalMs,
    initial: o.initial,
    onReady: async (file) => {
      const rel = path.relative(inDir, file);
      if (o.keep && kept.get(rel) === (await fingerprint(file).catch(() => ''))) return;
      queue.push(file);
      pump();
    },
    onError: (e) => log(`kiln watch: scanning ${inDir}: ${(e as Error).message}`),
  });
  await scanner.start();
  log(`kiln watch: ${inDir} → ${outDir} with ${o.name} (${o.jobs} at a time; Ctrl-C stops)`);
  await new Promise<void>((resolve) =>
    o.signal.aborted ? resolve() : o.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  scanner.stop();
  await Promise.allSettled([...active]);
  log(`kiln watch: stopped (${processed} processed, ${failed} failed)`);
  return { processed, failed };
}

/** Moves IN/<rel> to IN/<bucket>/<rel>, never over an existing file (a later file of the same name). */
async function moveAside(inDir: string, bucket: string, rel: string): Promise<string> {
  const dest0 = path.join(inDir, bucket, rel);
  await mkdir(path.dirname(dest0), { recursive: true });
  let dest = dest0;
  const ext = path.extname(dest0);
  for (let n = 2; existsSync(dest) || existsSync(dest + '.error.json'); n++)
    dest = `${dest0.slice(0, dest0.length - ext.length)}-${n}${ext}`;
  await rename(path.join(inDir, rel), dest);
  return dest;
}

async function readKept(inDir: string): Promise<Map<string, string>> {
  try {
    return new Map(Object.entries(JSON.parse(await readFile(path.join(inDir, STATE), 'utf8')) as Record<string, string>));
  } catch {
    return new Map();
  }
}

async function writeKept(inDir: string, kept: Map<string, string>): Promise<void> {
  const tmp = path.join(inDir, `${STATE}.tmp`);
  await writeFile(tmp, JSON.stringify(Object.fromEntries(kept)));
  await rename(tmp, path.join(inDir, STATE));
}
