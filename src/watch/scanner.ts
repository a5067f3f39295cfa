/**
 * Finds the files of a watched folder that are completely written: a file is ready once its size and
 * modification time have not changed for `stableMs` (a copy in progress keeps growing; a download
 * renamed into place arrives whole). A directory scan every `intervalMs` is the source of truth;
 * fs.watch events only make the next scan come sooner (they can be lost or coalesced).
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export interface ScannerOptions {
  dir: string;
  recursive: boolean;
  stableMs: number;
  intervalMs: number;
  /** Report files already present at start (else they are ignored until they change). */
  initial: boolean;
  onReady(file: string): void;
  onError(e: unknown): void;
}

interface Seen {
  size: number;
  mtimeMs: number;
  since: number;
  /** Present at start without --initial, unchanged since: never reported. */
  ignored?: boolean;
  reported?: boolean;
}

/**
 * Hidden names are never inputs: .done/ .failed/, editors' and browsers' temp files, our own state;
 * nor Microsoft Office's owner files (~$report.docx, there while the document is open) and backup
 * copies (notes.txt~), which a folder of documents always has.
 */
const skip = (name: string) =>
  name.startsWith('.') || name.startsWith('~$') || name.endsWith('~') || /\.(part|crdownload|tmp|swp)$/i.test(name);

export class FolderScanner {
  private seen = new Map<string, Seen>();
  private timer?: NodeJS.Timeout;
  private watcher?: FSWatcher;
  private scanning = false;
  private again = false;
  private stopped = false;

  constructor(private readonly o: ScannerOptions) {}

  async start(): Promise<void> {
    await this.scan(true);
    try {
      this.watcher = watch(this.o.dir, { recursive: this.o.recursive }, () => this.poke());
      this.watcher.on('error', () => {});
    } catch {
      // Polling alone still works (e.g. file systems without inotify).
    }
    const tick = () => {
      this.timer = setTimeout(async () => {
        await this.scan(false);
        if (!this.stopped) tick();
      }, this.o.intervalMs);
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.watcher?.close();
  }

  /** The file was handled (moved away, or kept): forget it so a new file of that name counts again. */
  forget(file: string, keep = false): void {
    if (keep) this.seen.set(file, { ...(this.seen.get(file) ?? { size: -1, mtimeMs: -1, since: 0 }), reported: true });
    else this.seen.delete(file);
  }

  private poke(): void {
    if (this.scanning) this.again = true;
    else void this.scan(false);
  }

  private async scan(first: boolean): Promise<void> {
    if (this.stopped) return;
    this.scanning = true;
    try {
      const now = Date.now();
      const present = new Set<string>();
      for (const file of await this.list(this.o.dir)) {
        const st = await stat(file).catch(() => undefined);
        if (!st?.isFile()) continue;
        present.add(file);
        const prev = this.seen.get(file);
        if (!prev || prev.size !== st.size || prev.mtimeMs !== st.mtimeMs) {
          // New or changed: (re)start its quiet period. A kept file that changes is new work.
          this.seen.set(file, { size: st.size, mtimeMs: st.mtimeMs, since: now, ignored: first && !this.o.initial });
          continue;
        }
        if (prev.reported || prev.ignored) continue;
        if (now - prev.since >= this.o.stableMs) {
          prev.reported = true;
          this.o.onReady(file);
        }
      }
      for (const f of this.seen.keys()) if (!present.has(f)) this.seen.delete(f);
    } catch (e) {
      this.o.onError(e);
    } finally {
      this.scanning = false;
    }
    if (this.again) {
      this.again = false;
      await this.scan(false);
    }
  }

  private async list(dir: string): Promise<string[]> {
    const out: string[] = [];
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (skip(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (this.o.recursive) out.push(...(await this.list(p).catch(() => [])));
      } else if (e.isFile()) out.push(p);
    }
    return out;
  }
}
