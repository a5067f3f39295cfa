/**
 * The install queue of a data dir: bundles wait their turn and install one at a time (two installs
 * never write the same store at once). The queue is a JSON file, rewritten atomically on every change,
 * so it survives a restart: an install cut off by a restart is queued again and starts over from its
 * verified cache. Installed bundles leave the queue; failed ones stay, with the reason, until retried.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { BUNDLES, findBundle } from '../bundles/list.js';
import type { BundleManifest } from '../bundles/manifest.js';
import { queueFile } from '../paths.js';
import { installBundle, isBundleIntact, isRuntimeInstalled, downloadsOf } from './installer.js';
import { exportBundle, importBundle } from './archive.js';
import type { BundleArchiveStore } from './archive-store.js';
import { clearStaging, newStaging, removeInstall } from './layout.js';

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

/** `shared`: installed from the archive another instance kept in the archive store. */
export type InstallEvent = {
  type: 'installed' | 'failed';
  bundle: string;
  by?: string;
  error?: string;
  via?: 'download' | 'import' | 'shared';
};

export interface InstallQueueOptions {
  /**
   * Scaled mode with object storage: every bundle installed or imported here is kept there as an
   * archive (once per version), and a bundle this instance lacks is installed from it, verified like
   * any import, before anything is downloaded.
   */
  archives?: BundleArchiveStore;
  /** How often a running instance looks for archives it lacks (default SYNC_EVERY_MS). */
  syncEveryMs?: number;
  /** Failures that do not fail the install (keeping its archive for the other instances). */
  warn?: (message: string, err: unknown) => void;
}

/** With an archive store: how often an instance looks for bundles the others installed. */
export const SYNC_EVERY_MS = 60_000;

export class InstallQueue {
  private entries: QueueEntry[] = [];
  private running: { bundle: string; abort: AbortController; done: Promise<void> } | undefined;
  private saving = Promise.resolve();
  private lastSave = 0;
  private stopped = false;
  private syncTimer: NodeJS.Timeout | undefined;
  /** Serialises installs, imports and removals of this data dir. */
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dataDir: string,
    private readonly onEvent: (e: InstallEvent) => void = () => {},
    private readonly opts: InstallQueueOptions = {},
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
    void this.syncFromArchives();
    // A bundle another instance installs while this one runs arrives within SYNC_EVERY_MS, without an
    // admin listing features here.
    if (this.opts.archives) {
      this.syncTimer = setInterval(() => void this.syncFromArchives(), this.opts.syncEveryMs ?? SYNC_EVERY_MS);
      this.syncTimer.unref();
    }
  }

  /**
   * Queues every bundle this instance lacks whose archive another instance kept in the archive store
   * (none without a store; a failed entry waits for the admin's retry). Answers the bundles queued.
   */
  async syncFromArchives(): Promise<string[]> {
    const store = this.opts.archives;
    if (!store || this.stopped) return [];
    const wanted: string[] = [];
    try {
      for (const b of BUNDLES) {
        if (this.entries.some((e) => e.bundle === b.id) || (await this.isReady(b))) continue;
        if (await store.has(b.id, b.version)) wanted.push(b.id);
      }
    } catch (e) {
      this.opts.warn?.('could not look for bundle archives in object storage', e);
      return [];
    }
    if (!wanted.length) return [];
    return (await this.enqueue(wanted)).queued;
  }

  private async isReady(b: BundleManifest): Promise<boolean> {
    const runtimes = await Promise.all(downloadsOf(b).runtimes.map((r) => isRuntimeInstalled(this.dataDir, r)));
    return runtimes.every(Boolean) && (await isBundleIntact(this.dataDir, b));
  }

  /** Installs `b` from the archive store when it keeps an archive of it; false when it does not. */
  private async installShared(b: BundleManifest, signal: AbortSignal): Promise<boolean> {
    const store = this.opts.archives;
    if (!store) return false;
    const dir = await newStaging(this.dataDir, 'shared');
    try {
      const file = path.join(dir, 'bundle.tar');
      if (!(await store.get(b.id, b.version, file))) return false;
      await importBundle(this.dataDir, file, { signal });
      return true;
    } catch (e) {
      if (signal.aborted) throw e;
      // A kept archive that is unreachable or fails its checks: the pinned download is still right.
      this.opts.warn?.(`installing ${b.id} from its archive in object storage failed; downloading it`, e);
      return false;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Keeps the installed `b` in the archive store for the other instances (exported from this install). */
  private async share(b: BundleManifest): Promise<void> {
    const store = this.opts.archives;
    if (!store) return;
    const dir = await newStaging(this.dataDir, 'share');
    try {
      const file = path.join(dir, 'bundle.tar');
      await exportBundle(this.dataDir, b, file);
      await store.put(b.id, b.version, file);
    } catch (e) {
      this.opts.warn?.(`keeping ${b.id} in object storage for the other instances failed`, e);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Queues the bundles not yet installed; answers which were queued and which were already there. */
  async enqueue(bundles: string[], by?: string): Promise<{ queued: string[]; installed: string[] }> {
    const queued: string[] = [];
    const installed: string[] = [];
    for (const id of bundles) {
      const b = findBundle(id);
      if (!b) throw new KilnError('NOT_FOUND', `No feature bundle ${id}.`);
      if (await this.isReady(b)) {
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
    const r = await this.exclusive(async () => {
      const got = await importBundle(this.dataDir, archive);
      // The whole install, not the upload: an archive may carry only the import-only files.
      await this.share(findBundle(got.bundle)!);
      return got;
    });
    this.entries = this.entries.filter((e) => e.bundle !== r.bundle);
    await this.save(true);
    this.onEvent({ type: 'installed', bundle: r.bundle, by, via: 'import' });
    return r;
  }

  /** Removes an installed bundle (and stops its install if one runs). Runtimes stay for other bundles. */
  async remove(bundle: string): Promise<boolean> {
    await this.cancel(bundle);
    // Removed here, it must not come back from the shared archive (the other instances keep their copy
    // until an admin removes it there too).
    await this.opts.archives?.drop(bundle).catch((e: unknown) => this.opts.warn?.('could not drop the shared bundle archive', e));
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
    clearInterval(this.syncTimer);
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
      const b = findBundle(e.bundle)!;
      const via = await this.exclusive(async () => {
        if (await this.installShared(b, signal)) return 'shared' as const;
        await installBundle(this.dataDir, b, {
          signal,
          onProgress: (bytesDone, bytesTotal, stage) => {
            Object.assign(e, { bytesDone, bytesTotal, stage });
            void this.save(false);
          },
        });
        await this.share(b);
        return 'download' as const;
      });
      this.entries = this.entries.filter((x) => x !== e);
      this.onEvent({ type: 'installed', bundle: e.bundle, by: e.by, via });
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
