/**
 * The page task behind htmlToPdf (run in the Chromium worker): prints an HTML document to PDF with
 * every network request blocked. The page is served from a fake origin (DOC_ORIGIN) by request
 * interception, every other request is aborted, WebSockets are closed and the context is switched
 * offline. file:// is never used, so a page cannot read local files; relative references resolve to
 * files under baseDir only.
 */
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page, Route } from 'playwright-core';
import type { PageTaskIo } from '../chromium.js';
import { htmlContentType } from './html-charset.js';

/** The fake origin offline documents are served from. `.invalid` can never resolve (RFC 2606). */
export const DOC_ORIGIN = 'http://kiln.invalid';

export interface PdfArgs {
  html: string | Uint8Array;
  outPath: string;
  /** Real path of the directory the document may use files of. */
  baseDir?: string;
}

export async function printPdf(page: Page, ctx: BrowserContext, a: PdfArgs, io: PageTaskIo): Promise<void> {
  const blocked = (url: string) => io.emit('blocked', url);
  await ctx.routeWebSocket(/.*/, (ws) => {
    blocked(ws.url());
    void ws.close();
  });
  await ctx.route('**/*', (route) => serveOffline(route, a, blocked));
  // Offline as a second wall: anything the router did not see (pings, beacons) fails too.
  await ctx.setOffline(true);
  // Print media before the document loads: one layout, in the media it is printed in.
  await page.emulateMedia({ media: 'print' });
  await page.goto(`${DOC_ORIGIN}/index.html`, { waitUntil: 'load' });
  await page.pdf({
    path: a.outPath,
    format: 'A4',
    printBackground: true,
    preferCSSPageSize: true,
    margin: { top: '16mm', bottom: '16mm', left: '14mm', right: '14mm' },
  });
}

async function serveOffline(route: Route, a: PdfArgs, blocked: (url: string) => void): Promise<void> {
  const url = route.request().url();
  if (url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
  if (!url.startsWith(DOC_ORIGIN + '/')) {
    blocked(url);
    return route.abort('blockedbyclient');
  }
  const rel = decodeURIComponent(new URL(url).pathname).replace(/^\/+/, '');
  if (rel === 'index.html')
    return route.fulfill({
      status: 200,
      contentType: htmlContentType(a.html),
      body: typeof a.html === 'string' ? a.html : Buffer.from(a.html),
    });
  if (!a.baseDir) return route.fulfill({ status: 404, body: '' });
  const file = path.resolve(a.baseDir, rel);
  try {
    const real = await realpath(file);
    if (!real.startsWith(a.baseDir + path.sep)) throw new Error('outside');
    return route.fulfill({ status: 200, body: await readFile(real), contentType: guessType(real) });
  } catch {
    return route.fulfill({ status: 404, body: '' });
  }
}

function guessType(p: string): string {
  const ext = path.extname(p).toLowerCase();
  const map: Record<string, string> = {
    '.css': 'text/css',
    '.png': 'image/png',
    '.jpg': 'image/jpeg',
    '.jpeg': 'image/jpeg',
    '.gif': 'image/gif',
    '.svg': 'image/svg+xml',
    '.webp': 'image/webp',
    '.xhtml': 'application/xhtml+xml',
    '.html': 'text/html',
    '.woff': 'font/woff',
    '.woff2': 'font/woff2',
    '.ttf': 'font/ttf',
    '.otf': 'font/otf',
  };
  return map[ext] ?? 'application/octet-stream';
}
