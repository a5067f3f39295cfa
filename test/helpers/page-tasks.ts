/** Page tasks for tests of the Chromium engine (src/engines/chromium.ts runs them in its worker). */
import type { BrowserContext, Page } from 'playwright-core';
import { KilnError } from '../../src/core/errors.js';
import type { PageTaskIo } from '../../src/engines/chromium.js';

export const PAGE_TASKS = new URL(import.meta.url).href;

/** The text of `selector` in `html`. */
export async function textOf(page: Page, _ctx: BrowserContext, a: { html: string; selector: string }): Promise<string | null> {
  await page.setContent(a.html);
  return page.textContent(a.selector);
}

/** A value computed in the page, with a progress report on the way. */
export async function evaluateSum(page: Page, _ctx: BrowserContext, a: { x: number; y: number }, io: PageTaskIo): Promise<number> {
  io.progress(50, 'adding');
  return page.evaluate(([x, y]) => x + y, [a.x, a.y] as const);
}

/** Fails the way a tool's page logic refuses an input. */
export async function refuse(_page: Page, _ctx: BrowserContext, a: { reason: string }): Promise<never> {
  throw new KilnError('UNSUPPORTED_INPUT', 'refused in the page task', { reason: a.reason });
}

/** Waits for what never comes, until the engine closes the context (cancel, time-out) and the wait fails. */
export async function waitForever(page: Page): Promise<void> {
  await page.waitForSelector('#never', { timeout: 600_000 });
}

/**
 * When the page was opened (its blank document's time origin, ms since the epoch) and how many
 * cookies its context holds; `setCookie` leaves one behind for the next job to (not) find.
 */
export async function pageState(
  page: Page,
  ctx: BrowserContext,
  a: { setCookie?: boolean },
): Promise<{ openedAt: number; cookies: number }> {
  const openedAt = await page.evaluate(() => performance.timeOrigin);
  const cookies = (await ctx.cookies()).length;
  if (a.setCookie) await ctx.addCookies([{ name: 'left', value: 'behind', url: 'http://kiln.invalid/' }]);
  return { openedAt, cookies };
}
