/** Small helpers shared by the part-B image tools for naming outputs and raster buffers. */
import path from 'node:path';
import type { OutputFile } from '../../../core/tool.js';
import { contentTypeFor } from '../../../core/mime.js';

export function outputFile(p: string): OutputFile {
  const name = path.basename(p);
  return { path: p, name, contentType: contentTypeFor(name) };
}

/** XML text escaping for strings placed inside SVG we draw. */
export function xmlEscape(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    const e = new Error('The run was cancelled.');
    e.name = 'AbortError';
    throw e;
  }
}
