/** GET /api/v1/download/:jobId/:filename: streams a finished job's output, with Range support. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { binary, errorResponses, ref } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';
import { openOutput, storedKey } from '../storage/job-files.js';
import { jobId, visibleJob } from './jobs.js';

/** RFC 6266: an ASCII fallback plus the exact UTF-8 name in filename*. */
export function contentDisposition(name: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'invalid' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // RFC 9110 §14.2: a Range that is not one valid byte range (another unit, bad syntax, last before
  // first) is ignored and the whole file sent (200); several ranges (multipart/byteranges) are rare
  // and get the whole file too. 416 is only for a valid range the file cannot satisfy: it was also
  // sent for `items=0-1` or `bytes=5-2`, failing a client that merely asked for more than it needed.
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] !== '' && m[2] !== '' && Number(m[2]) < Number(m[1])) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return 'invalid';
  return { start, end };
}

/** Whether an If-None-Match header names `etag` (weak comparison: a W/ prefix does not matter) or is `*`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/**
 * The Range to honour given If-Range (RFC 9110 §13.1.5): a resumed download whose validator (an ETag,
 * compared strongly, or the Last-Modified date) no longer names this content gets the whole file (200),
 * never the rest of new bytes stitched onto the start of old ones.
 */
export function rangeIf(
  headers: { range?: string; 'if-range'?: string },
  size: number,
  validators: { etag: string; lastModified?: string },
): ReturnType<typeof parseRange> {
  const ifRange = headers['if-range']?.trim();
  if (ifRange !== undefined) {
    const matches = ifRange.startsWith('"') || ifRange.startsWith('W/') ? ifRange === validators.etag : ifRange === validators.lastModified;
    if (!matches) return undefined;
  }
  return parseRange(headers.range, size);
}

/**
 * 416 for a Range outside the file: the error body alone, without the file's Content-Disposition (a
 * browser would save the JSON under the file's name) or its validators.
 */
export function unsatisfiable(reply: FastifyReply, size: number): FastifyReply {
  return reply
    .code(416)
    .type('application/json; charset=utf-8')
    .header('accept-ranges', 'bytes')
    .header('content-range', `bytes */${size}`)
    .send(new KilnError('USAGE_ERROR', `The Range header does not fit a file of ${size} bytes.`).toJSON());
}

/**
 * RFC 9110 §13.1.2-3: If-None-Match decides when sent; If-Modified-Since only without it, and only
 * whole seconds count (an HTTP date has no finer part).
 */
function notModified(headers: { 'if-none-match'?: string; 'if-modified-since'?: string }, etag: string, modifiedAt: number): boolean {
  if (headers['if-none-match'] !== undefined) return noneMatch(headers['if-none-match'], etag);
  const since = headers['if-modified-since'] ? Date.parse(headers['if-modified-since']) : Number.NaN;
  return Number.isFinite(since) && Math.floor(modifiedAt / 1000) * 1000 <= since;
}

export async function downloadRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/v1/download/:jobId/:filename', { schema: DOWNLOAD_DOC }, async (request, reply) => {
    const { jobId, filename } = request.params as { jobId: string; filename: string };
    const row = await visibleJob(app, request, jobId);
    if (row.status !== 'completed') {
      if (row.status === 'queued' || row.status === 'running')
        throw new KilnError(
          'JOB_NOT_READY',
          `Job ${jobId} is ${row.status}; follow /api/v1/jobs/${jobId}/progress and download when it completes.`,
        );
      throw new KilnError('NOT_FOUND', `Job ${jobId} has no output (it ${row.status === 'failed' ? 'failed' : 'was cancelled'}).`);
    }
    if (!row.output_path && row.output_name === filename)
      throw new KilnError('NOT_FOUND', `The output of job ${jobId} has expired (outputs are kept for outputTtlHours).`);
    if (!row.output_path || !row.output_name || row.output_name !== filename)
      throw new KilnError('NOT_FOUND', `Job ${jobId} has no file named ${filename}.`);
    const storage = app.kiln.storage;
    // A bucket that does not answer is 503 (UNAVAILABLE), not "expired".
    const out = await openOutput(storage, row.output_path);
    if (!out) throw new KilnError('NOT_FOUND', `The output of job ${jobId} has expired or was removed.`);
    let body: Awaited<ReturnType<typeof out.read>> | undefined;
    let range: ReturnType<typeof rangeIf>;
    try {
      // S3_DOWNLOADS=redirect: the client fetches the output from the bucket itself.
      const key = storedKey(row.output_path);
      const direct =
        key &&
        (await storage.presign?.(key, {
          expiresS: 300,
          disposition: contentDisposition(row.output_name),
          contentType: row.content_type ?? undefined,
        }));
      if (direct) return reply.code(302).header('location', direct).header('cache-control', 'no-store').send();
      // A job's output never changes once written: its id, size and time make a strong validator, so a
      // client that holds the file already (If-None-Match, If-Modified-Since) gets 304 without the bytes
      // and a resumed download checks it still has the same file (If-Range).
      const etag = `"${jobId}-${out.size.toString(16)}-${Math.floor(out.modifiedAt).toString(16)}"`;
      const lastModified = new Date(out.modifiedAt).toUTCString();
      if (notModified(request.headers, etag, out.modifiedAt))
        return reply.code(304).header('etag', etag).header('last-modified', lastModified).send();
      range = rangeIf(request.headers, out.size, { etag, lastModified });
      if (range === 'invalid') return unsatisfiable(reply, out.size);
      body = await out.read(range || undefined);
      reply.header('etag', etag).header('last-modified', lastModified);
    } finally {
      // Whatever is answered without the bytes lets go of the file here; a read took it.
      if (!body) out.close();
    }
    reply
      .header('content-type', row.content_type ?? 'application/octet-stream')
      .header('content-disposition', contentDisposition(row.output_name))
      .header('accept-ranges', 'bytes')
      .header('x-content-type-options', 'nosniff');
    if (range) {
      reply
        .code(206)
        .header('content-range', `bytes ${range.start}-${range.end}/${out.size}`)
        .header('content-length', range.end - range.start + 1);
      return reply.send(body);
    }
    reply.header('content-length', Buffer.isBuffer(body) ? body.length : out.size);
    return reply.send(body);
  });
}

const DOWNLOAD_DOC: RouteDoc = {
  operationId: 'download',
  tags: ['jobs'],
  summary: "A finished job's output (owner or admin).",
  parameters: [
    jobId,
    { name: 'filename', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'Range', in: 'header', schema: { type: 'string' }, description: 'bytes=start-end' },
    {
      name: 'If-Range',
      in: 'header',
      schema: { type: 'string' },
      description: 'An ETag or date: the Range applies only while it names this file.',
    },
    { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETags the client holds: 304 when one is this file.' },
    {
      name: 'If-Modified-Since',
      in: 'header',
      schema: { type: 'string' },
      description: 'Without If-None-Match: 304 when the file is not newer.',
    },
  ],
  response: {
    '200': {
      description: 'The file, with its content type and Content-Disposition.',
      content: { 'application/octet-stream': { schema: binary } },
    },
    '206': { description: 'The requested byte range.', content: { 'application/octet-stream': { schema: binary } } },
    '304': { description: 'The client holds this file already (If-None-Match or If-Modified-Since).' },
    '416': { description: 'The range does not fit the file.', content: { 'application/json': { schema: ref('Error') } } },
    ...errorResponses([401, 404, 409]),
  },
};
