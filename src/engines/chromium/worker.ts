/**
 * The Chromium worker: one warm headless Chromium driven by playwright-core, in a worker thread of
 * its own. playwright-core is one bundle of ~28 MB of heap once imported (its whole server side runs
 * in process); here it lives only as long as the browser, and goes with the thread when the idle
 * browser stops, instead of staying in the daemon for good.
 *
 * Each task gets its own browser context (no cookies, cache or storage shared between jobs), closed
 * afterwards, on its time-out and on abort. The browser is relaunched when it died between tasks.
 */
import { parentPort } from 'node:worker_threads';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { KilnError } from '../../core/errors.js';
import type { PageTaskIo } from '../chromium.js';
import type { FromWorker, ToWorker, WireError } from './protocol.js';

const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);

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
let current: Browser | undefined;
const aborts = new Map<number, AbortController>();

/**
 * The next job's context and page, opened once a job has ended: a new context starts a renderer
 * process, which took ~0.3 s of a warm Markdown → PDF (and ~0.7 s on a loaded machine) before the
 * page could load anything. It is as fresh as one opened on demand (nothing has run in it); it is
 * used only by a job asking for the same options on the same browser, and closed with the browser.
 */
interface Spare {
  key: string;
  browser: Browser;
  ready: Promise<{ context: BrowserContext; page: Page }>;
}
let spare: Spare | undefined;

function openSpare(browser: Browser, options: BrowserContextOptions): void {
  const key = JSON.stringify(options);
  if (spare?.key === key && spare.browser === browser) return;
  dropSpare();
  const ready = browser.newContext(options).then(async (context) => {
    try {
      return { context, page: await context.newPage() };
    } catch (e) {
      // A context without its page is of no use to anyone: it goes now, not with the browser.
      await context.close().catch(() => undefined);
      throw e;
    }
  });
  ready.catch(() => undefined);
  spare = { key, browser, ready };
}

/** The spare for these options on this browser, or undefined (none, another kind, or it failed). */
async function takeSpare(browser: Browser, options: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page } | undefined> {
  const s = spare;
  if (!s || s.browser !== browser || s.key !== JSON.stringify(options) || !browser.isConnected()) return undefined;
  spare = undefined;
  return s.ready.catch(() => undefined);
}

function dropSpare(): void {
  const s = spare;
  spare = undefined;
  void s?.ready.then(({ context }) => context.close()).catch(() => undefined);
}

async function launch(exe: string): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  // Playwright gives every launch a fresh temporary user-data-dir and removes it on close.
  const browser = await chromium.launch({ executablePath: exe, args: FLAGS, headless: true, chromiumSandbox: false, timeout: 60_000 });
  browser.on('disconnected', () => {
    if (spare?.browser === browser) spare = undefined;
    if (current === browser) {
      current = undefined;
      browserP = undefined;
    }
  });
  current = browser;
  return browser;
}

function getBrowser(exe: string): Promise<Browser> {
  if (current && !current.isConnected()) browserP = undefined;
  browserP ??= launch(exe).catch((e) => {
    browserP = undefined;
    throw e instanceof KilnError ? e : new KilnError('ENGINE_MISSING', `Chromium could not start: ${(e as Error).message.split('\n')[0]}`);
  });
  return browserP;
}

async function closeBrowser(): Promise<void> {
  dropSpare();
  const p = browserP;
  browserP = undefined;
  current = undefined;
  if (p) await p.then((b) => b.close()).catch(() => undefined);
}

type Task = (page: Page, context: BrowserContext, args: unknown, io: PageTaskIo) => Promise<unknown>;

async function run(m: Extract<ToWorker, { type: 'run' }>): Promise<unknown> {
  // Cancel and time-out close the context and settle the run at once, whatever the task is awaiting
  // (a page call pending when its context closes does not always fail).
  const stop = new AbortController();
  aborts.set(m.id, stop);
  let context: BrowserContext | undefined;
  /** Where and how this job's context was opened: the spare for the next job is the same. */
  let used: { browser: Browser; options: BrowserContextOptions } | undefined;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, m.timeoutMs);
  const stopped = new Promise<never>((_, reject) =>
    stop.signal.addEventListener(
      'abort',
      () => {
        void context?.close().catch(() => undefined);
        reject(new Error('stopped'));
      },
      { once: true },
    ),
  );
  const work = async () => {
    const task = (await import(m.task.module))[m.task.name] as Task | undefined;
    if (typeof task !== 'function') throw new KilnError('INTERNAL', `No page task ${m.task.name} in ${m.task.module}.`);
    let browser = await getBrowser(m.exe);
    const options = { serviceWorkers: 'block' as const, acceptDownloads: false, ...m.options };
    const taken = await takeSpare(browser, options);
    let page: Page;
    if (taken) ({ context, page } = taken);
    else {
      try {
        context = await browser.newContext(options);
      } catch {
        // The browser died between jobs: one relaunch.
        await closeBrowser();
        browser = await getBrowser(m.exe);
        context = await browser.newContext(options);
      }
      if (stop.signal.aborted) throw new Error('stopped');
      page = await context.newPage();
    }
    if (m.spare) used = { browser, options };
    if (stop.signal.aborted) throw new Error('stopped');
    page.setDefaultTimeout(m.timeoutMs);
    const io: PageTaskIo = {
      signal: stop.signal,
      progress: (percent, stage) => post({ type: 'event', id: m.id, name: 'progress', data: { percent, stage } }),
      emit: (name, data) => post({ type: 'event', id: m.id, name, data }),
    };
    return task(page, context, m.task.args, io);
  };
  try {
    return await Promise.race([work(), stopped]);
  } catch (e) {
    if (timedOut) throw new KilnError('TIMEOUT', `Rendering took longer than ${Math.round(m.timeoutMs / 1000)} s.`);
    if (stop.signal.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
    if (e instanceof KilnError) throw e;
    const msg = (e as Error).message?.split('\n')[0] ?? String(e);
    if (/Timeout .* exceeded/i.test(msg)) throw new KilnError('TIMEOUT', `Rendering timed out: ${msg}`);
    throw new KilnError('INTERNAL', `Chromium failed: ${msg}`);
  } finally {
    clearTimeout(timer);
    aborts.delete(m.id);
    await context?.close().catch(() => undefined);
    // Not awaited: the job's answer does not wait for the next job's page.
    if (used?.browser.isConnected() && current === used.browser) openSpare(used.browser, used.options);
  }
}

function wire(e: unknown): WireError {
  if (e instanceof KilnError) return { code: e.code, message: e.message, details: e.details, reason: e.reason };
  return { message: (e as Error)?.message ?? String(e) };
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'run')
    run(m).then(
      (value) => post({ type: 'done', id: m.id, value }),
      (e) => post({ type: 'failed', id: m.id, error: wire(e) }),
    );
  else if (m.type === 'abort') aborts.get(m.id)?.abort();
  else if (m.type === 'launch') getBrowser(m.exe).catch(() => undefined);
  else if (m.type === 'close') void closeBrowser().then(() => post({ type: 'closed' }));
});
