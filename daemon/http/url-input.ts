/**
 * An input given as a URL (MCP calls on the daemon): downloaded into the job's directory through the
 * same address guard as html-to-image, every redirect hop checked again, size-capped and streamed.
 */
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KilnError } from '../../src/core/errors.js';
import { safeFileName } from '../../src/core/paths.js';
import type { InputFile } from '../../src/core/tool.js';
import { resolveAllowed } from '../../src/tools/image/utilities/html-to-image.js';

const MAX_REDIRECTS = 5;

export async function downloadUrlInput(raw: string, dir: string, index: number, maxBytes: number, signal: AbortSignal): Promise<InputFile> {
  const { Agent, request } = await import('undici');
  let current = raw;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const pinned = await resolveAllowed(current);
    const agent = new Agent({
      connect: {
        lookup: ((_h: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) =>
          opts?.all ? cb(null, [{ address: pinned.address, family: pinned.family }]) : cb(null, pinned.address, pinned.family)) as never,
      },
    });
    try {
      const res = await request(pinned.url, { method: 'GET', dispatcher: agent, signal, headersTimeout: 20_000, bodyTimeout: 60_000 });
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump();
        current = new URL(String(res.headers.location), pinned.url).toString();
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new KilnError('UNSUPPORTED_INPUT', `Downloading ${pinned.url.href} answered HTTP ${res.statusCode}.`, {
          reason: 'url-status',
        });
      }
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > maxBytes) throw tooLarge(maxBytes);
      const name = safeFileName(decodeURIComponent(path.posix.basename(pinned.url.pathname)) || 'download', 'download');
      const p = path.join(dir, `${index}-${name}`);
      let size = 0;
      const capped = Readable.from(
        (async function* () {
          for await (const chunk of res.body) {
            size += (chunk as Buffer).length;
            if (size > maxBytes) throw tooLarge(maxBytes);
            yield chunk as Buffer;
          }
        })(),
      );
      try {
        await pipeline(capped, createWriteStream(p));
      } catch (e) {
        await rm(p, { force: true });
        throw e;
      }
      return { path: p, name, size: (await stat(p)).size };
    } finally {
      await agent.close().catch(() => {});
    }
  }
  throw new KilnError('UNSUPPORTED_INPUT', `Downloading ${raw} redirected more than ${MAX_REDIRECTS} times.`, { reason: 'url-redirects' });
}

function tooLarge(maxBytes: number): KilnError {
  return new KilnError(
    'LIMIT_EXCEEDED',
    `The download is larger than the upload limit of ${Math.round(maxBytes / 1048576)} MB (MAX_UPLOAD_MB).`,
  );
}
