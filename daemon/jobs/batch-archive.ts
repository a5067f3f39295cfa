/**
 * The archive of a batch: every output in input order (names made unique) and manifest.json, listing each
 * input with its output name or its error and the counts. Streamed to the client, or written to the job's
 * directory when the batch ran asynchronously (Prefer: respond-async) and is downloaded later.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

/** Already compressed: stored as they are. */
const STORED = /\.(jpe?g|png|webp|avif|gif|mp4|webm|mov|mp3|m4a|ogg|opus|zip|pdf|heic|docx|xlsx|pptx|epub)$/i;

export interface ManifestItem {
  input: string;
  output?: string;
  /** Where the output is on disk (not in the manifest). */
  path?: string;
  size?: number;
  data?: unknown;
  error?: { code: string; message: string; details?: unknown; reason?: string };
}

export interface BatchCounts {
  total: number;
  succeeded: number;
  failed: number;
}

/**
 * Unique names inside one archive, assigned in input order. Compared without case: unzipped on macOS or
 * Windows, Photo.jpg and photo.jpg (or MANIFEST.json and manifest.json) are one file, and the later one
 * would silently replace the earlier.
 */
function namer() {
  const seen = new Set<string>(['manifest.json']);
  return (name: string) => {
    let n = name;
    for (let i = 2; seen.has(n.toLowerCase()); i++) {
      const dot = name.lastIndexOf('.');
      n = dot > 0 ? `${name.slice(0, dot)} (${i})${name.slice(dot)}` : `${name} (${i})`;
    }
    seen.add(n.toLowerCase());
    return n;
  };
}

/**
 * The archive's name, as answered and as kept as a job's output. A pipeline's target id is
 * `pipeline:<name>`: a colon is no file name on Windows (a browser renames it, `curl -OJ` fails there),
 * so it is `pipeline-<name>-batch.zip`; an unnamed pipeline (named `pipeline`) is `pipeline-batch.zip`.
 */
export function batchArchiveName(tool: string): string {
  const base = tool === 'pipeline:pipeline' ? 'pipeline' : tool;
  return `${base.replace(/[^\w.-]+/g, '-')}-batch.zip`;
}

export function countItems(items: ManifestItem[]): BatchCounts {
  const failed = items.filter((m) => m.error).length;
  return { total: items.length, succeeded: items.length - failed, failed };
}

/** The archive, complete (ended): read it from `outputStream`. */
export function batchArchive(jobId: string, tool: string, items: ManifestItem[]): yazl.ZipFile {
  const zip = new yazl.ZipFile();
  const uniq = namer();
  const manifest = items.map(({ path: file, ...item }) => {
    if (file && item.output) {
      item.output = uniq(item.output);
      zip.addFile(file, item.output, { compress: !STORED.test(item.output) });
    }
    return item;
  });
  const body = { jobId, tool, ...countItems(items), items: manifest };
  zip.addBuffer(Buffer.from(JSON.stringify(body, null, 2) + '\n'), 'manifest.json');
  zip.end();
  return zip;
}

/** Writes the archive as `<tool>-batch.zip` in `dir`; its path, name and size. */
export async function writeBatchArchive(
  dir: string,
  jobId: string,
  tool: string,
  items: ManifestItem[],
): Promise<{ path: string; name: string; size: number }> {
  await mkdir(dir, { recursive: true });
  const name = batchArchiveName(tool);
  const file = path.join(dir, name);
  await pipeline(batchArchive(jobId, tool, items).outputStream, createWriteStream(file));
  return { path: file, name, size: (await stat(file)).size };
}
