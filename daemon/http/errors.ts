/**
 * One error shape for every route, `{error: {code, message, details?, reason?}}`, including the errors
 * fastify and its plugins raise themselves (bad JSON, content types, sizes, unknown routes).
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { ERROR_TABLE, KilnError, toKilnError, type ErrorCode } from '../../src/core/errors.js';

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'USAGE_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
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
  if (/^(Multipart|Malformed|Unexpected end of form|Part terminated early)/i.test(err?.message ?? '')) {
    return new KilnError('USAGE_ERROR', `The multipart body is malformed: ${err.message}`, { cause: e });
  }
  const status = err?.statusCode;
  if (status && status >= 400 && status < 500 && BY_STATUS[status]) return new KilnError(BY_STATUS[status]!, err.message, { cause: e });
  return toKilnError(e);
}

export function installErrorHandling(app: FastifyInstance, maxUploadMb: number): void {
  app.setErrorHandler((e, request, reply) => {
    const err = toHttpError(e, maxUploadMb);
    if (err.code === 'INTERNAL') request.log.error({ err: e }, 'request failed');
    // A streamed answer that fails half-way cannot change its status: cut it so the client sees the failure.
    if (reply.sent || reply.raw.headersSent) return void reply.raw.destroy();
    void reply.code(ERROR_TABLE[err.code].status).type('application/json; charset=utf-8').send(err.toJSON());
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new KilnError(
      'NOT_FOUND',
      `No route ${request.method} ${request.url.split('?')[0]}. GET /api/v1/openapi.yaml lists the routes.`,
    );
    void reply.code(404).send(err.toJSON());
  });
}
