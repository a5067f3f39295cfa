/**
 * What html-to-image runs beside the browser, in the Chromium worker (src/engines/chromium.ts): the
 * address checks, the pinned fetch every request of the page goes through, and the capture itself.
 * Kept apart from the tool's declaration so the worker imports only this.
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { KilnError } from '../../../core/errors.js';
import { ipv4Of, ipv6Groups, mappedIPv4 } from '../../../core/ipv6.js';
import type { PageTaskIo } from '../../../engines/chromium.js';

/**
 * Where a page may be fetched from. Loopback, private, link-local, CGNAT, multicast and reserved
 * addresses are refused (server-side request forgery) unless KILN_URL_ALLOWLIST names the host or a
 * CIDR that contains the address ("127.0.0.1, intranet.example, 10.1.0.0/16").
 *
 * Chromium never resolves or connects by itself: every request of the page is intercepted and made by
 * Node against the address we checked (so DNS rebinding between check and use cannot work), redirects
 * are handed back to the browser and checked again as new requests, and WebSockets are closed.
 */
const BLOCKED = new net.BlockList();
for (const [a, p] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(a, p, 'ipv4');
for (const [a, p] of [
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  BLOCKED.addSubnet(a, p, 'ipv6');

/**
 * IPv4 hidden in an IPv6 address, checked as IPv4: mapped (::ffff:0:0/96), the well-known NAT64 prefix
 * (64:ff9b::/96) and 6to4 (2002::/16), whatever the spelling. The IPv4-compatible range (::/96) and
 * local-use NAT64 (64:ff9b:1::/48) are refused whole in BLOCKED.
 */
function embeddedV4(addr: string): string | undefined {
  const g = ipv6Groups(addr);
  if (!g) return undefined;
  const mapped = mappedIPv4(g);
  if (mapped) return mapped;
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  return undefined;
}

export function isPrivateAddress(addr: string): boolean {
  const v4 = net.isIPv4(addr) ? addr : embeddedV4(addr);
  if (v4) return BLOCKED.check(v4, 'ipv4');
  return BLOCKED.check(addr, 'ipv6');
}

interface AllowList {
  hosts: string[];
  nets: net.BlockList;
}

function allowList(raw: string): AllowList {
  const hosts: string[] = [];
  const nets = new net.BlockList();
  for (const entry of raw.split(/[\s,]+/).filter(Boolean)) {
    const [ip, bits] = entry.split('/');
    const fam = net.isIP(ip!);
    if (fam) {
      const type = fam === 4 ? 'ipv4' : 'ipv6';
      if (bits !== undefined) nets.addSubnet(ip!, Number(bits), type);
      else nets.addAddress(ip!, type);
    } else hosts.push(entry.toLowerCase());
  }
  return { hosts, nets };
}

function hostAllowed(host: string, allow: AllowList): boolean {
  return allow.hosts.some((h) => h === host || (h.startsWith('*.') && host.endsWith(h.slice(1))));
}

function addressAllowed(addr: string, allow: AllowList): boolean {
  const v4 = net.isIPv4(addr) ? addr : embeddedV4(addr);
  return v4 ? allow.nets.check(v4, 'ipv4') : allow.nets.check(addr, 'ipv6');
}

export interface Pinned {
  url: URL;
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a URL's host once and checks every address; the request is then made to that address.
 * `allowlist` is KILN_URL_ALLOWLIST as the caller reads it now (the worker's copy of the environment
 * is the one of its start).
 */
export async function resolveAllowed(raw: string, allowlist = process.env.KILN_URL_ALLOWLIST ?? ''): Promise<Pinned> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new KilnError('VALIDATION_ERROR', `Not a valid URL: ${raw}`, { details: [{ path: 'url', message: 'invalid URL' }] });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new KilnError('VALIDATION_ERROR', 'Only http and https URLs can be captured.', {
      details: [{ path: 'url', message: 'unsupported scheme' }],
      reason: 'url-scheme',
    });
  }
  if (url.username || url.password)
    throw new KilnError('VALIDATION_ERROR', 'URLs with credentials are not accepted.', {
      details: [{ path: 'url', message: 'credentials in URL' }],
    });
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allow = allowList(allowlist);
  let addrs: { address: string; family: number }[];
  if (net.isIP(host)) addrs = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addrs = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new KilnError('VALIDATION_ERROR', `The host ${host} could not be resolved.`, {
        details: [{ path: 'url', message: 'unknown host' }],
        reason: 'url-unresolvable',
      });
    }
  }
  if (!addrs.length) throw new KilnError('VALIDATION_ERROR', `The host ${host} has no address.`, { reason: 'url-unresolvable' });
  // Every address must pass: a name that also resolves to a private address is refused outright.
  for (const a of addrs) {
    if (isPrivateAddress(a.address) && !hostAllowed(host, allow) && !addressAllowed(a.address, allow)) {
      throw new KilnError(
        'VALIDATION_ERROR',
        `${host} points to a private, loopback or link-local address (${a.address}); an administrator can allow it with KILN_URL_ALLOWLIST.`,
        {
          details: [{ path: 'url', message: 'address not allowed' }],
          reason: 'url-not-allowed',
        },
      );
    }
  }
  return { url, address: addrs[0]!.address, family: addrs[0]!.family === 6 ? 6 : 4 };
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'content-length',
  'accept-encoding',
  'cookie',
]);
const MAX_RESPONSE_BYTES = 25 * 1024 * 1024;
const MAX_REDIRECTS = 10;

/** Makes one HTTP request from Node to the checked address; redirects are returned, not followed. */
async function fetchPinned(p: Pinned, method: string, headers: Record<string, string>, body: Buffer | null, signal: AbortSignal) {
  const { Agent, request } = await import('undici');
  const agent = new Agent({
    connect: {
      lookup: ((_h: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) =>
        opts?.all ? cb(null, [{ address: p.address, family: p.family }]) : cb(null, p.address, p.family)) as never,
    },
  });
  try {
    const h: Record<string, string> = { 'accept-encoding': 'identity' };
    for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k.toLowerCase())) h[k] = v;
    const res = await request(p.url, {
      method: method as 'GET',
      headers: h,
      body: body ?? undefined,
      dispatcher: agent,
      signal,
      headersTimeout: 20_000,
      bodyTimeout: 20_000,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res.body) {
      size += (c as Buffer).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw new KilnError('LIMIT_EXCEEDED', `A response of the page is larger than ${MAX_RESPONSE_BYTES} bytes.`);
      }
      chunks.push(c as Buffer);
    }
    const outHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined || ['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'set-cookie'].includes(k)) continue;
      outHeaders[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    return { status: res.statusCode, headers: outHeaders, body: Buffer.concat(chunks) };
  } finally {
    void agent.close().catch(() => undefined);
  }
}

/** Chromium cannot capture taller bitmaps than this in one piece. */
const MAX_CAPTURE_HEIGHT = 16_384;

export interface CaptureArgs {
  /** The first URL, already checked by resolveAllowed. */
  url: string;
  fullPage: boolean;
  /** Viewport width (the clip of an over-tall full page). */
  width: number;
  /** KILN_URL_ALLOWLIST when the run started. */
  allowlist: string;
}

/** The page task: loads the page through fetchPinned, follows checked redirects, returns a PNG. */
export async function capture(page: Page, context: BrowserContext, a: CaptureArgs, io: PageTaskIo): Promise<Uint8Array> {
  await context.routeWebSocket(/.*/, (ws) => void ws.close());
  let mainRefused: KilnError | undefined;
  let mainRedirect: string | undefined;
  await context.route('**/*', async (route) => {
    const req = route.request();
    const url = req.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    const isMain = req.isNavigationRequest() && req.frame() === page.mainFrame();
    try {
      let target = url;
      // Chromium sends a fulfilled redirect straight to the network, bypassing interception, so
      // redirects never reach it: the main page's are replayed as new navigations below, and
      // those of sub-resources are followed here, each hop checked like the first.
      for (let hop = 0; ; hop++) {
        const pinned = await resolveAllowed(target, a.allowlist);
        const res = await fetchPinned(
          pinned,
          hop ? 'GET' : req.method(),
          await req.allHeaders(),
          hop ? null : req.postDataBuffer(),
          io.signal,
        );
        const loc = res.status >= 300 && res.status < 400 ? res.headers.location : undefined;
        if (!loc) return await route.fulfill(res);
        if (hop >= MAX_REDIRECTS) throw new KilnError('UNSUPPORTED_INPUT', 'Too many redirects.');
        target = new URL(loc, target).href;
        if (isMain) {
          mainRedirect = target;
          return await route.abort('aborted');
        }
      }
    } catch (e) {
      if (isMain && e instanceof KilnError) mainRefused = e;
      await route.abort('blockedbyclient').catch(() => undefined);
    }
  });
  let next: string | undefined = a.url;
  for (let hop = 0; next; hop++) {
    if (hop > MAX_REDIRECTS) throw new KilnError('UNSUPPORTED_INPUT', 'The page redirects too many times.');
    const url: string = next;
    mainRedirect = undefined;
    try {
      await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    } catch (e) {
      if (mainRefused) throw mainRefused;
      if (!mainRedirect) throw new KilnError('UNSUPPORTED_INPUT', `The page could not be loaded: ${(e as Error).message.split('\n')[0]}`);
    }
    next = mainRedirect;
  }
  if (mainRefused) throw mainRefused;
  // Late images and fonts: wait briefly for the network to settle, never for long.
  await page.waitForLoadState('networkidle', { timeout: 3000 }).catch(() => undefined);
  io.progress(60, 'capturing');
  if (!a.fullPage) return page.screenshot({ type: 'png' });
  const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0));
  if (height <= MAX_CAPTURE_HEIGHT) return page.screenshot({ type: 'png', fullPage: true });
  return page.screenshot({ type: 'png', fullPage: true, clip: { x: 0, y: 0, width: a.width, height: MAX_CAPTURE_HEIGHT } });
}
