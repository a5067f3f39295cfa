/**
 * One warm headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), shared by
 * html-to-pdf, markdown-to-pdf, epub-convert and html-to-image. Each job gets its own browser context
 * (no cookies, cache or storage shared between jobs). The browser is relaunched when it dies.
 *
 * Documents rendered to PDF never reach the network: the page is served from a fake origin
 * (http://kiln.document/) by request interception, every other request is aborted, WebSockets are
 * closed and the context is switched offline. file:// is never used, so a page cannot read local files.
 *
 * Keeping it warm: the browser's pipes keep the Node event loop alive, so a one-shot CLI would never
 * exit. By default the browser is closed once it has been idle for KILN_CHROMIUM_IDLE_MS (1 s); the
 * daemon calls keepChromiumWarm() so that it stays up until shutdownChromium().
 */
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Page, Route } from 'playwright-core';
import { KilnError } from '../core/errors.js';
import { requireEngine } from './registry.js';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--dns-prefetch-disable',
  '--disable-domain-reliability',
  '--disable-breakpad',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Chromium itself must never reach the network: every request we allow is intercepted and answered
  // by Node. Anything that slips past interception finds no DNS and a proxy that does not exist.
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--proxy-server=http://kiln-no-network.invalid:1',
  '--proxy-bypass-list=<-loopback>',
];

let browserP: Promise<Browser> | undefined;
let active = 0;
let idleMs = Number(process.env.KILN_CHROMIUM_IDLE_MS) || 1000;
let idleTimer: NodeJS.Timeout | undefined;

async function launch(): Promise<Browser> {
  const exe = await requireEngine('chromium');
  const { chromium } = await import('playwright-core');
  // Playwright gives every launch a fresh temporary user-data-dir and removes it on close.
  const browser = await chromium.launch({ executablePath: exe, args: FLAGS, headless: true, chromiumSandbox: false, timeout: 60_000 });
  browser.on('disconnected', () => {
    if (current === browser) {
      current = undefined;
      browserP = undefined;
    }
  });
  current = browser;
  return browser;
}
let current: Browser | undefined;

function getBrowser(): Promise<Browser> {
  if (current && !current.isConnected()) browserP = undefined;
  browserP ??= launch().catch((e) => {
    browserP = undefined;
    throw e instanceof KilnError ? e : new KilnError('ENGINE_MISSING', `Chromium could not start: ${(e as Error).message.split('\n')[0]}`);
  });
  return browserP;
}

/**
 * Keeps the browser running for `ms` after its last job (the daemon passes KILN_ENGINE_IDLE_S), or
 * until shutdownChromium() when Infinity. Playwright itself kills the browser when the process exits.
 */
export function keepChromiumWarm(ms = Infinity): void {
  idleMs = ms;
  if (idleTimer) clearTimeout(idleTimer);
}

/** Closes the browser. Safe to call more than once. */
export async function shutdownChromium(): Promise<void> {
  if (idleTimer) clearTimeout(idleTimer);
  const p = browserP;
  browserP = undefined;
  current = undefined;
  if (p) await p.then((b) => b.close()).catch(() => undefined);
}

/**
 * The browser's process id (tests kill it to check the relaunch). Playwright does not expose it on
 * Browser; the browser is our direct child process running the Chromium binary. Linux only.
 */
export async function chromiumPid(): Promise<number | undefined> {
  if (!current) return undefined;
  const { readdir } = await import('node:fs/promises');
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command: state, ppid, …
    const m = /\) \S+ (\d+)/.exec(st);
    if (m && Number(m[1]) === process.pid && /chrom/i.test(st.slice(st.indexOf('('), st.lastIndexOf(')')))) return Number(d);
  }
  return undefined;
}

/**
 * Runs fn with a fresh context and page; the context is always closed afterwards and the job's
 * time-out and cancel signal close it early.
 */
export async function withPage<T>(
  opts: BrowserContextOptions,
  fn: (page: Page, ctx: BrowserContext) => Promise<T>,
  job: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<T> {
  if (job.signal?.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
  active++;
  if (idleTimer) clearTimeout(idleTimer);
  let context: BrowserContext | undefined;
  let timedOut = false;
  const timeoutMs = job.timeoutMs ?? 60_000;
  const timer = setTimeout(() => {
    timedOut = true;
    void context?.close().catch(() => undefined);
  }, timeoutMs);
  const onAbort = () => void context?.close().catch(() => undefined);
  job.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let browser = await getBrowser();
    try {
      context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false, ...opts });
    } catch {
      // The browser died between jobs: one relaunch.
      await shutdownChromium();
      browser = await getBrowser();
      context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false, ...opts });
    }
    const page = await context.newPage();
    page.setDefaultTimeout(timeoutMs);
    return await fn(page, context);
  } catch (e) {
    if (job.signal?.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
    if (timedOut) throw new KilnError('TIMEOUT', `Rendering took longer than ${Math.round(timeoutMs / 1000)} s.`);
    if (e instanceof KilnError) throw e;
    const msg = (e as Error).message?.split('\n')[0] ?? String(e);
    if (/Timeout .* exceeded/i.test(msg)) throw new KilnError('TIMEOUT', `Rendering timed out: ${msg}`);
    throw new KilnError('INTERNAL', `Chromium failed: ${msg}`);
  } finally {
    clearTimeout(timer);
    job.signal?.removeEventListener('abort', onAbort);
    await context?.close().catch(() => undefined);
    active--;
    // (setTimeout takes at most 2^31-1 ms: anything longer is as good as never.)
    if (active === 0 && Number.isFinite(idleMs) && idleMs <= 2 ** 31 - 1) {
      idleTimer = setTimeout(() => void shutdownChromium(), idleMs);
    }
  }
}

/** The fake origin offline documents are served from. `.invalid` can never resolve (RFC 2606). */
export const DOC_ORIGIN = 'http://kiln.invalid';

export interface PdfOptions {
  /** Directory whose files the document may use (images of an EPUB…); nothing outside it is served. */
  baseDir?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Called for every request that was blocked (tests, logs). */
  onBlocked?: (url: string) => void;
}

/**
 * Prints an HTML document to PDF with every network request blocked. The document is served from
 * DOC_ORIGIN; relative references resolve to files under baseDir.
 */
export async function htmlToPdf(html: string | Buffer, outPath: string, o: PdfOptions = {}): Promise<void> {
  const base = o.baseDir ? await realpath(o.baseDir) : undefined;
  await withPage(
    { offline: false, javaScriptEnabled: true, bypassCSP: false },
    async (page, ctx) => {
      await ctx.routeWebSocket(/.*/, (ws) => {
        o.onBlocked?.(ws.url());
        void ws.close();
      });
      await ctx.route('**/*', (route) => serveOffline(route, html, base, o.onBlocked));
      // Offline as a second wall: anything the router did not see (pings, beacons) fails too.
      await ctx.setOffline(true);
      await page.goto(`${DOC_ORIGIN}/index.html`, { waitUntil: 'load' });
      await page.emulateMedia({ media: 'print' });
      await page.pdf({
        path: outPath,
        format: 'A4',
        printBackground: true,
        preferCSSPageSize: true,
        margin: { top: '16mm', bottom: '16mm', left: '14mm', right: '14mm' },
      });
    },
    { signal: o.signal, timeoutMs: o.timeoutMs },
  );
}

async function serveOffline(
  route: Route,
  html: string | Buffer,
  base: string | undefined,
  onBlocked?: (url: string) => void,
): Promise<void> {
  const url = route.request().url();
  if (url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
  if (!url.startsWith(DOC_ORIGIN + '/')) {
    onBlocked?.(url);
    return route.abort('blockedbyclient');
  }
  const rel = decodeURIComponent(new URL(url).pathname).replace(/^\/+/, '');
  if (rel === 'index.html')
    return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: typeof html === 'string' ? html : html });
  if (!base) return route.fulfill({ status: 404, body: '' });
  const file = path.resolve(base, rel);
  try {
    const real = await realpath(file);
    if (!real.startsWith(base + path.sep)) throw new Error('outside');
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
