/**
 * The items of a batch: each accepted input run through the tool (at most JOB_CONCURRENCY at once, in
 * this instance's local queue; inputs refused from their bytes take no slot), returned in input order
 * with where each output is, for the archive (batch-archive.ts). Used by the batch route when the batch
 * runs where it was posted, and by the worker of any instance when it came through the shared queue.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { KilnError, toKilnError } from '../../src/core/errors.js';
import type { InputFile } from '../../src/core/tool.js';
import { runTool } from '../../src/tools/run-tool.js';
import type { DaemonConfig } from '../config.js';
import type { JobQueue } from '../queue/queue.js';
import type { Store } from '../store/db.js';
import { updateJob } from '../store/jobs.js';
import type { ManifestItem } from './batch-archive.js';
import type { JobEvents } from './events.js';
import type { Target } from './targets.js';

export interface BatchItems {
  id: string;
  target: Target;
  settings: Record<string, unknown>;
  files: InputFile[];
  /** Inputs already refused from their bytes, by index: they are not run. */
  refused?: Map<number, ManifestItem['error']>;
  workDir: string;
  queue: JobQueue;
  config: Pick<DaemonConfig, 'dataDir' | 'allowPostScript'>;
  signal: AbortSignal;
  /** After each item, with how many are done. */
  onItem(finished: number, total: number): void;
}

/** Runs every item; the items in input order, each with its output's path and size or its error. */
export async function runBatchItems(b: BatchItems): Promise<ManifestItem[]> {
  const items: ManifestItem[] = new Array(b.files.length);
  let finished = 0;
  const ended = () => b.onItem(++finished, b.files.length);
  // On cancel the queue entries are dropped too, so waiting items end at once.
  const dropWaiting = () => {
    for (let i = 0; i < b.files.length; i++) b.queue.cancel(`${b.id}:${i}`);
  };
  b.signal.addEventListener('abort', dropWaiting, { once: true });
  try {
    await Promise.all(
      b.files.map(async (f, i) => {
        const error = b.refused?.get(i);
        if (error) {
          items[i] = { input: f.name, error };
          return ended();
        }
        const itemDir = path.join(b.workDir, 'items', String(i));
        try {
          await mkdir(itemDir, { recursive: true });
          // A cancel that came while the item was being set up has dropped the waiting items already:
          // queued now, it waited behind every other job (the cancel request hanging on it) before it
          // was refused.
          if (b.signal.aborted) throw new KilnError('CANCELLED', 'The batch was cancelled.');
          const outcome = await b.queue.run(`${b.id}:${i}`, (signal) =>
            runTool(b.target.tool, { files: [f], extra: {} }, b.settings, {
              workDir: itemDir,
              dataDir: b.config.dataDir,
              signal: AbortSignal.any([signal, b.signal]),
              validated: true,
              allowPostScript: b.config.allowPostScript,
            }),
          );
          const item: ManifestItem = { input: f.name };
          if (outcome.output) {
            item.output = outcome.output.name;
            item.path = outcome.output.path;
            item.size = outcome.processedSize;
          }
          if (outcome.data !== undefined) item.data = outcome.data;
          items[i] = item;
        } catch (e) {
          items[i] = { input: f.name, error: toKilnError(e).toJSON().error };
        }
        // Items dropped by a cancel did not get done: counted, they took a cancelled batch to "6/6, 100%"
        // (its record and the last progress events), as if it had finished.
        if (!b.signal.aborted) ended();
      }),
    );
  } finally {
    b.signal.removeEventListener('abort', dropWaiting);
  }
  return items;
}

/**
 * A batch's progress: published as items end, and written to its record in order (an older write never
 * lands after a newer one, or after the final record: await `flushed()` before writing that).
 */
export function batchProgress(
  db: Store['db'],
  events: JobEvents,
  id: string,
): { onItem(finished: number, total: number): void; flushed(): Promise<void> } {
  let writes = Promise.resolve();
  return {
    onItem(finished, total) {
      const percent = Math.round((finished / total) * 100);
      const stage = `${finished}/${total}`;
      events.publish(id, { type: 'progress', percent, stage });
      writes = writes.then(() =>
        updateJob(db, id, { progress: percent, stage }).then(
          () => {},
          () => {},
        ),
      );
    },
    flushed: () => writes,
  };
}
