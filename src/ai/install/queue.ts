/**
 * The install queue of a data dir: bundles wait their turn and install one at a time (two installs
 * never write the same store at once). The queue is a JSON file, rewritten atomically on every change,
 * so it survives a restart: an install cut off by a restart is queued again and starts over from its
 * verified cache. Installed bundles leave the queue; failed ones stay, with the reason, until retried.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { findBundle } from '../bundles/list.js';
import { queueFile } from '../paths.js';
import { installBundle, isBundleCurrent, isRuntimeInstalled, downloadsOf } from './installer.js';
import { importBundle } from './archive.js';
import { clearStaging, removeInstall } from './layout.js';

export interface QueueEntry {
  bundle: string;
  state: 'queued' | 'installing' | 'failed';
  bytesDone: number;
  bytesTotal: number;
  stage?: string;
  error?: { message: string; reason?: string };
  queuedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Who asked (user id or 'cli'), for the audit log. */
  by?: string;
}

export type InstallEvent = { type: 'installed' | 'failed'; bundle: string; by?: string; error?: string; via?: 'download' | 'import' };

export class InstallQueue {
  private entries: QueueEntry[] = [];
  private running: { bundle: string; abort: AbortController; done: Promise<void> } | undefined;
  private saving = Promise.resolve();
  private lastSave = 0;
  private stopped = false;
  /** Serialises installs, imports and removals of this data dir. */
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dataDir: string,
    private readonly onEvent: (e: InstallEvent) => void = () => {},
  ) {}

  /** Loads the queue, re-queues an install a restart cut off, removes its staging and starts work. */
  async start(): Promise<void> {
    try {
      const saved = JSON.parse(await readFile(queueFile(this.dataDir), 'utf8')) as { entries?: QueueEntry[] };
      this.entries = (saved.entries ?? []).filter((e) => findBundle(e.bundle));
    } catch {
      this.entries = [];
    }
    for (const e of this.entries) if (e.state === 'installing') Object.assign(e, { state: 'queued', bytesDone: 0, stage: undefined });
    await clearStaging(this.dataDir);
    await this.save(true);
    this.kick();
  }

  /** Queues the bundles not yet installed; answers which were queued and which were already there. */
  async enqueue(bundles: string[], by?: string): Promise<{ queued: string[]; installed: string[] }> {
    const queued: string[] = [];
    const installed: string[] = [];
    for (const id of bundles) {
      const b = findBundle(id);
      if (!b) throw new KilnError('NOT_FOUND', `No feature bundle ${id}.`);
      const runtimesReady = (await Promise.all(downloadsOf(b).runtimes.map((r) => isRuntimeInstalled(this.dataDir, r)))).every(Boolean);
      if ((await isBundleCurrent(this.dataDir, b)) && runtimesReady) {
        installed.push(id);
        continue;
      }
      const existing = this.entries.find((e) => e.bundle === id);
      if (existing && existing.state !== 'failed') {
        queued.push(id);
        continue;
      }
      const entry: QueueEntry = {
        bundle: id,
        state: 'queued',
        bytesDone: 0,
        bytesTotal: downloadsOf(b).bytes,
        queuedAt: new Date().toISOString(),
        by,
      };
      if (existing) Object.assign(existing, entry, { error: undefined, startedAt: undefined, finishedAt: undefined });
      else this.entries.push(entry);
      queued.push(id);
    }
    await this.save(true);
    this.kick();
    return { queued, installed };
  }

  /** Runs `fn` when no install, import or removal runs (one writer of the store at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => {});
    return run;
  }

  /** Installs an uploaded archive (air-gapped), in turn with queued installs. */
  async importArchive(archive: string, by?: string): Promise<{ bundle: string; version: string }> {
    const r = await this.exclusive(() => importBundle(this.dataDir, archive));
    this.entries = this.entries.filter((e) => e.bundle !== r.bundle);
    await this.save(true);
    this.onEvent({ type: 'installed', bundle: r.bundle, by, via: 'import' });
    return r;
  }

  /** Removes an installed bundle (and stops its install if one runs). Runtimes stay for other bundles. */
  async remove(bundle: string): Promise<boolean> {
    await this.cancel(bundle);
    return this.exclusive(() => removeInstall(this.dataDir, 'bundle', bundle));
  }

  entry(bundle: string): QueueEntry | undefined {
    return this.entries.find((e) => e.bundle === bundle);
  }

  /** Drops a bundle from the queue, stopping its install if it runs. */
  async cancel(bundle: string): Promise<void> {
    if (this.running?.bundle === bundle) {
      this.running.abort.abort();
      await this.running.done.catch(() => {});
    }
    this.entries = this.entries.filter((e) => e.bundle !== bundle);
    await this.save(true);
  }

  /** Resolves when nothing is queued or installing (tests, CLI). */
  async idle(): Promise<void> {
    while (this.running) await this.running.done.catch(() => {});
  }

  /** Stops the running install (it stays `installing` on disk, so the next start queues it again). */
  async stop(): Promise<void> {
    this.stopped = true;
    const r = this.running;
    if (r) {
      r.abort.abort();
      await r.done.catch(() => {});
    }
    await this.saving;
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    const next = this.entries.find((e) => e.state === 'queued');
    if (!next) return;
    const abort = new AbortController();
    const done = this.work(next, abort.signal).finally(() => {
      this.running = undefined;
      this.kick();
    });
    this.running = { bundle: next.bundle, abort, done };
  }

  private async work(e: QueueEntry, signal: AbortSignal): Promise<void> {
    Object.assign(e, { state: 'installing', startedAt: new Date().toISOString(), bytesDone: 0 });
    await this.save(true);
    try {
      await this.exclusive(() =>
        installBundle(this.dataDir, findBundle(e.bundle)!, {
          signal,
          onProgress: (bytesDone, bytesTotal, stage) => {
            Object.assign(e, { bytesDone, bytesTotal, stage });
            void this.save(false);
          },
        }),
      );
      this.entries = this.entries.filter((x) => x !== e);
      this.onEvent({ type: 'installed', bundle: e.bundle, by: e.by });
    } catch (err) {
      if (this.stopped) return;
      const k = err instanceof KilnError ? err : undefined;
      Object.assign(e, {
        state: 'failed',
        finishedAt: new Date().toISOString(),
        error: {
          message: signal.aborted ? 'The install was cancelled.' : (err as Error).message,
          reason: signal.aborted ? 'cancelled' : k?.reason,
        },
      });
      this.onEvent({ type: 'failed', bundle: e.bundle, by: e.by, error: e.error!.message });
    }
    await this.save(true);
  }

  /** Atomic rewrite; progress-only saves at most once a second. */
  private save(force: boolean): Promise<void> {
    const now = Date.now();
    if (!force && now - this.lastSave < 1000) return this.saving;
    this.lastSave = now;
    const body = `${JSON.stringify({ entries: this.entries }, null, 2)}\n`;
    const file = queueFile(this.dataDir);
    this.saving = this.saving.then(async () => {
      await mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, body, { mode: 0o600 });
      await rename(tmp, file);
    });
    return this.saving;
  }
}
