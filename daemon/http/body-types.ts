/**
 * What request bodies the daemon reads: JSON and multipart (and the SAML form post, saml.ts). Fastify
 * also parses text/plain by default, which let a body that is JSON by its look but text/plain by its
 * header (`fetch(url, {body: JSON.stringify(s)})` without a content type sends text/plain) reach a
 * route as a string: it failed as "The JSON body must be the settings object" (400), misleading, and
 * text/plain is a type a cross-site form may send without a preflight. It is now 415 like any other
 * type, except an empty body (a bodyless POST from a client that labels it anyway).
 *
 * Content-Encoding on a request (a gzipped JSON or multipart body) is not decoded: 415 naming the
 * coding (RFC 9110 §15.5.16) instead of "not valid JSON" or "malformed multipart".
 */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';

const NOT_READ = 'Send multipart/form-data (files) or application/json (settings only).';

export function installBodyTypes(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  // Refused from the headers, unread (node discards the rest): a large text body is 415 too, not 413.
  app.addContentTypeParser('text/plain', (request, _payload, done) => {
    if (!hasBody(request.headers)) return done(null, undefined);
    done(new KilnError('UNSUPPORTED_INPUT', `A text/plain body is not read. ${NOT_READ}`), undefined);
  });
  app.addHook('onRequest', async (request) => {
    const coding = request.headers['content-encoding']?.trim().toLowerCase();
    if (coding && coding !== 'identity' && hasBody(request.headers))
      throw new KilnError('UNSUPPORTED_INPUT', `A request body with Content-Encoding ${coding} is not decoded: send it uncompressed.`);
  });
}

function hasBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}
