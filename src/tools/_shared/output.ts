/**
 * The one way a tool describes a file it wrote: its path, the name offered for download (the file's
 * own name unless given) and a content type from that name (unless given).
 */
import path from 'node:path';
import { contentTypeFor } from '../../core/mime.js';
import type { OutputFile } from '../../core/tool.js';

export function outputFile(p: string, o: { name?: string; contentType?: string } = {}): OutputFile {
  const name = o.name ?? path.basename(p);
  return { path: p, name, contentType: o.contentType ?? contentTypeFor(name) };
}
