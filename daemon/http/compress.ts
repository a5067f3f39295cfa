/**
 * Response compression for text answers (JSON, YAML, plain text, HTML, JS, CSS, SVG): br or gzip as the
 * client's Accept-Encoding prefers, with `Vary: Accept-Encoding`. Media, archives and PDFs are already
 * compressed and pass as they are; so do streamed answers (downloads with ranges, SSE, batch ZIPs) and
 * small bodies, where the headers would cost more than they save. Large bodies that repeat (the 1.1 MB
 * OpenAPI document) are compressed once and kept in a small cache.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const COMPRESSIBLE = /^(text\/|application\/(json|yaml|x-yaml|xml|javascript|problem\+json|x-ndjson)|image\/svg\+xml|[^;]*\+(json|xml))/i;
/** Below this a compressed body is hardly smaller than the headers it needs. */
const MIN_BYTES = 1024;
/** Bodies this large are cached compressed (by content digest), a few at a time. */
const CACHE_FROM = 64 * 1024;
const CACHE_ENTRIES = 8;

export type Encoding = 'br' | 'gzip';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** br or gzip from an Accept-Encoding header (q-values and `*` honoured; br first on a tie), or undefined. */
export function pickEncoding(header: string | undefined): Encoding | undefined {
  if (!header) return undefined;
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const v = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(v) ? v : 0);
  }
  const of = (e: Encoding) => q.get(e) ?? q.get('*') ?? 0;
  const best = (['br', 'gzip'] as const).reduce<Encoding | undefined>((a, e) => (of(e) > 0 && (!a || of(e) > of(a)) ? e : a), undefined);
  return best;
}

async function encode(body: Buffer, enc: Encoding): Promise<Buffer> {
  if (enc === 'gzip') return gzip(body, { level: 6 });
  // Quality 5: most of br's gain at a small part of its top level's time (for answers made per request).
  return brotli(body, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    },
  });
}

const cache = new Map<string, Buffer>();

async function compressed(body: Buffer, enc: Encoding): Promise<Buffer> {
  if (body.length < CACHE_FROM) return encode(body, enc);
  const key = `${enc}:${createHash('sha256').update(body).digest('base64')}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const out = await encode(body, enc);
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, out);
  return out;
}

function addVary(reply: FastifyReply): void {
  const cur = String(reply.getHeader('vary') ?? '');
  if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(cur)) reply.header('vary', cur ? `${cur}, Accept-Encoding` : 'Accept-Encoding');
}

async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const type = String(reply.getHeader('content-type') ?? '');
  if (!COMPRESSIBLE.test(type)) return payload;
  addVary(reply);
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  if (reply.getHeader('content-encoding') || reply.getHeader('content-range') || reply.statusCode === 204 || reply.statusCode === 304)
    return payload;
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  if (body.length < MIN_BYTES) return payload;
  const enc = pickEncoding(request.headers['accept-encoding']);
  if (!enc) return payload;
  const out = await compressed(body, enc);
  reply.header('content-encoding', enc);
  reply.removeHeader('content-length');
  // The compressed bytes differ from the ones a strong validator names.
  const etag = reply.getHeader('etag');
  if (typeof etag === 'string' && !etag.startsWith('W/')) reply.header('etag', `W/${etag}`);
  return out;
}

export function installCompression(app: FastifyInstance): void {
  app.addHook('onSend', onSend);
}
