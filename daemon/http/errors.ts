/**
 * One error shape for every route, `{error: {code, message, details?, reason?}}`, including the errors
 * fastify and its plugins raise themselves (bad JSON, content types, sizes, unknown routes).
 */
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_TABLE, KilnError, toKilnError, type ErrorCode } from '../../src/core/errors.js';
import { allowedMethods } from './methods.js';

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'USAGE_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'USAGE_ERROR',
  409: 'CONFLICT',
  413: 'LIMIT_EXCEEDED',
  415: 'UNSUPPORTED_INPUT',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

export function toHttpError(e: unknown, maxUploadMb: number): KilnError {
  if (e instanceof KilnError) return e;
  const err = e as FastifyError & { part?: unknown };
  switch (err?.code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new KilnError('LIMIT_EXCEEDED', `An uploaded file is larger than the limit of ${maxUploadMb} MB (MAX_UPLOAD_MB).`, {
        cause: e,
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new KilnError('LIMIT_EXCEEDED', 'The request body is too large.', { cause: e });
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new KilnError('LIMIT_EXCEEDED', `Too many parts in the upload: ${err.message}`, { cause: e });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new KilnError('UNSUPPORTED_INPUT', `${err.message}. Send multipart/form-data (files) or application/json (settings only).`, {
        cause: e,
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new KilnError('USAGE_ERROR', 'The JSON body is empty.', { cause: e });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new KilnError('USAGE_ERROR', `The body is not valid JSON: ${err.message}`, { cause: e });
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new KilnError('USAGE_ERROR', 'The request is not multipart/form-data.', { cause: e });
    case 'FST_PROTO_VIOLATION':
      return new KilnError('USAGE_ERROR', 'A form field name is not allowed.', { cause: e });
  }
  if (err?.validation) return new KilnError('VALIDATION_ERROR', err.message, { details: err.validation, cause: e });
  if (err instanceof SyntaxError && (err as FastifyError).statusCode === 400)
    return new KilnError('USAGE_ERROR', `The body is not valid JSON: ${err.message}`, { cause: e });
  // Busboy reports truncated or malformed multipart bodies as plain errors.
  // (busboy: "Unexpected end of form"; @fastify/busboy, which @fastify/multipart uses: "… of multipart data".)
  if (/^(Multipart|Malformed|Unexpected end of (form|multipart data)|Part terminated early)/i.test(err?.message ?? '')) {
    return new KilnError('USAGE_ERROR', `The multipart body is malformed: ${err.message}`, { cause: e });
  }
  const status = err?.statusCode;
  if (status && status >= 400 && status < 500 && BY_STATUS[status]) return new KilnError(BY_STATUS[status]!, err.message, { cause: e });
  return toKilnError(e);
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route or hook runs, in the one shape.
 * A path parameter over maxParamLength (1024) names nothing that exists (ids are 24 hex digits, file
 * names at most 255 bytes), hence 404.
 */
export function frameworkErrors(e: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const err =
    e.code === 'FST_ERR_BAD_URL'
      ? new KilnError(
          'USAGE_ERROR',
          'The URL path is not valid: a percent-encoded part does not decode (a "%" must be followed by two hex digits).',
        )
      : e.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new KilnError('NOT_FOUND', 'A path segment is longer than any id or file name can be (1024 characters).')
        : toKilnError(e);
  void reply.code(ERROR_TABLE[err.code].status).type('application/json; charset=utf-8').send(err.toJSON());
}

const CLIENT_ERRORS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'LIMIT_EXCEEDED',
    message: `The request headers are larger than the limit (${maxHeaderSize} bytes).`,
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'TIMEOUT',
    message: 'The request was not received in time (HEADERS_TIMEOUT_S, REQUEST_TIMEOUT_S).',
  },
};

/**
 * Fastify's `clientErrorHandler`: a request node cannot parse (headers too large, malformed HTTP, too
 * slow) never reaches fastify, so fastify's default answered in its own shape. This one answers with the
 * one error body; the status stays the one HTTP has for the case (431, 408, 400), the only answers whose
 * status is not their code's.
 */
export function clientErrorHandler(e: NodeJS.ErrnoException, socket: Socket): void {
  if (e.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[e.code ?? ''] ?? { status: 400, code: 'USAGE_ERROR', message: 'The request is not valid HTTP.' };
  const body = JSON.stringify(new KilnError(known.code, known.message).toJSON());
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${known.status} ${STATUS_TEXT[known.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(e);
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

export function installErrorHandling(app: FastifyInstance, maxUploadMb: number): void {
  app.setErrorHandler((e, request, reply) => {
    const err = toHttpError(e, maxUploadMb);
    if (err.code === 'INTERNAL') request.log.error({ err: e }, 'request failed');
    // A streamed answer that fails half-way cannot change its status: cut it so the client sees the failure.
    if (reply.sent || reply.raw.headersSent) return void reply.raw.destroy();
    void reply.code(ERROR_TABLE[err.code].status).type('application/json; charset=utf-8').send(err.toJSON());
  });
  app.setNotFoundHandler((request, reply) => {
    const allow = allowedMethods(app, request.url);
    if (allow.length) {
      reply.header('allow', allow.join(', '));
      if (request.method === 'OPTIONS') return void reply.code(204).send();
      const err = new KilnError(
        'METHOD_NOT_ALLOWED',
        `${request.method} is not a method of ${request.url.split('?')[0]}; it takes ${allow.join(', ')}.`,
        {
          details: { allow },
        },
      );
      return void reply.code(405).send(err.toJSON());
    }
    const err = new KilnError(
      'NOT_FOUND',
      `No route ${request.method} ${request.url.split('?')[0]}. GET /api/v1/openapi.yaml lists the routes.`,
    );
    void reply.code(404).send(err.toJSON());
  });
}
