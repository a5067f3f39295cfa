/** Writes ZIP archives by streaming each file from disk (yazl); nothing is held whole in memory. */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

export interface ZipEntry {
  path: string;
  name: string;
}

/** Names inside one archive must be unique: `a.png`, `a (2).png`, … */
export function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((n) => {
    const count = seen.get(n) ?? 0;
    seen.set(n, count + 1);
    if (count === 0) return n;
    const dot = n.lastIndexOf('.');
    return dot > 0 ? `${n.slice(0, dot)} (${count + 1})${n.slice(dot)}` : `${n} (${count + 1})`;
  });
}

export async function zipFiles(entries: ZipEntry[], outPath: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const names = uniqueNames(entries.map((e) => e.name));
  entries.forEach((e, i) => {
    zip.addFile(e.path, names[i]!, {
      compress: !/\.(jpe?g|png|webp|avif|gif|mp4|webm|mp3|m4a|ogg|zip|pdf|heic|docx|xlsx|pptx)$/i.test(e.name),
    });
  });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(outPath));
}
