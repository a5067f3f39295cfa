/**
 * The items of a batch: each input run through the tool (at most JOB_CONCURRENCY at once, in this
 * instance's local queue), each output added to a ZIP as soon as it is done, then a manifest.json
 * listing every input with its output name or its error. Used by the batch route when the batch
 * runs where it was posted, and by the worker of any instance when it came through the shared queue.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type yazl from 'yazl';
import { toKilnError } from '../../src/core/errors.js';
import type { InputFile } from '../../src/core/tool.js';
import { runTool } from '../../src/tools/run-tool.js';
import type { DaemonConfig } from '../config.js';
import type { JobQueue } from '../queue/queue.js';
import type { Target } from './targets.js';

const STORED = /\.(jpe?g|png|webp|avif|gif|mp4|webm|mov|mp3|m4a|ogg|opus|zip|pdf|heic|docx|xlsx|pptx|epub)$/i;

export interface ManifestItem {
  input: string;
  output?: string;
  size?: number;
  data?: unknown;
  error?: { code: string; message: string; details?: unknown; reason?: string };
}

export interface BatchSummary {
  jobId: string;
  tool: string;
  total: number;
  succeeded: number;
  failed: number;
  items: ManifestItem[];
}

export interface BatchItems {
  id: string;
  target: Target;
  settings: Record<string, unknown>;
  files: InputFile[];
  workDir: string;
  queue: JobQueue;
  config: Pick<DaemonConfig, 'dataDir' | 'allowPostScript'>;
  signal: AbortSignal;
  zip: yazl.ZipFile;
  /** After each item, with how many are done. */
  onItem(finished: number, total: number): void;
}

/** Unique names inside one archive, assigned as entries arrive. */
function namer() {
  const seen = new Set<string>(['manifest.json']);
  return (name: string) => {
    let n = name;
    for (let i = 2; seen.has(n); i++) {
      const dot = name.lastIndexOf('.');
      n = dot > 0 ? `${name.slice(0, dot)} (${i})${name.slice(dot)}` : `${name} (${i})`;
    }
    seen.add(n);
    return n;
  };
}

/** Runs every item and adds the manifest; the caller ends the ZIP. The total size of the outputs is `processed`. */
export async function runBatchItems(b: BatchItems): Promise<{ summary: BatchSummary; processed: number }> {
  const uniq = namer();
  const manifest: ManifestItem[] = new Array(b.files.length);
  let finished = 0;
  let processed = 0;
  // On cancel the queue entries are dropped too, so waiting items end at once.
  const dropWaiting = () => {
    for (let i = 0; i < b.files.length; i++) b.queue.cancel(`${b.id}:${i}`);
  };
  b.signal.addEventListener('abort', dropWaiting, { once: true });
  try {
    await Promise.all(
      b.files.map(async (f, i) => {
        const itemDir = path.join(b.workDir, 'items', String(i));
        try {
          await mkdir(itemDir, { recursive: true });
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
            item.output = uniq(outcome.output.name);
            item.size = outcome.processedSize;
            processed += outcome.processedSize;
            b.zip.addFile(outcome.output.path, item.output, { compress: !STORED.test(item.output) });
          }
          if (outcome.data !== undefined) item.data = outcome.data;
          manifest[i] = item;
        } catch (e) {
          manifest[i] = { input: f.name, error: toKilnError(e).toJSON().error };
        }
        finished++;
        b.onItem(finished, b.files.length);
      }),
    );
  } finally {
    b.signal.removeEventListener('abort', dropWaiting);
  }
  const failed = manifest.filter((m) => m.error).length;
  const summary: BatchSummary = {
    jobId: b.id,
    tool: b.target.id,
    total: b.files.length,
    succeeded: b.files.length - failed,
    failed,
    items: manifest,
  };
  b.zip.addBuffer(Buffer.from(JSON.stringify(summary, null, 2) + '\n'), 'manifest.json');
  return { summary, processed };
}
