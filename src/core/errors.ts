/**
 * The one error type of kiln. Every failure a person or a script can see carries a stable `code`;
 * the code alone decides the HTTP status and the CLI exit code, from the single table below.
 */

import { MAX_INPUT_PIXELS } from './limits.js';

export interface ErrorKind {
  /** HTTP status for the daemon. */
  status: number;
  /** Exit code for the CLI (see README "Exit codes"). */
  exit: number;
  /** One line for the README / OpenAPI. */
  meaning: string;
}

/** CLI exit codes. 5 (batch partly failed), 130 (Ctrl-C) and 143 (SIGTERM) are set by the CLI runner itself. */
export const EXIT = {
  OK: 0,
  OTHER: 1,
  USAGE: 2,
  INPUT: 3,
  MISSING: 4,
  PARTIAL: 5,
  INTERRUPTED: 130,
  /** 128 + SIGTERM's number, as a shell reports a process the signal ended (timeout, xargs, a service manager). */
  TERMINATED: 143,
} as const;

export const ERROR_TABLE = {
  VALIDATION_ERROR: { status: 400, exit: EXIT.USAGE, meaning: 'a setting or request field is missing, of the wrong type or out of range' },
  USAGE_ERROR: { status: 400, exit: EXIT.USAGE, meaning: 'the command line or request is malformed' },
  UNSUPPORTED_INPUT: {
    status: 415,
    exit: EXIT.INPUT,
    meaning: 'the input is corrupt, of a type the tool does not take, or lacks what the tool needs (e.g. no audio stream)',
  },
  LIMIT_EXCEEDED: { status: 413, exit: EXIT.USAGE, meaning: 'a size, count or duration limit was exceeded' },
  FEATURE_NOT_INSTALLED: { status: 409, exit: EXIT.MISSING, meaning: 'the tool needs a feature bundle that is not installed' },
  FEATURE_INCOMPATIBLE: { status: 409, exit: EXIT.MISSING, meaning: 'the feature cannot run on this system or with these settings' },
  FEATURE_DISABLED: { status: 403, exit: EXIT.MISSING, meaning: 'the feature is switched off in the settings' },
  ENGINE_MISSING: {
    status: 501,
    exit: EXIT.MISSING,
    meaning: 'a processing engine (program or library) is not installed; `kiln doctor` says how to install it',
  },
  UNAUTHORIZED: { status: 401, exit: EXIT.OTHER, meaning: 'no valid credentials' },
  MFA_REQUIRED: { status: 401, exit: EXIT.OTHER, meaning: 'a second factor is needed' },
  FORBIDDEN: { status: 403, exit: EXIT.OTHER, meaning: 'the credentials lack a permission' },
  NOT_FOUND: { status: 404, exit: EXIT.OTHER, meaning: 'no such route, tool, job, file or record (or not yours)' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    exit: EXIT.OTHER,
    meaning: 'the route exists but not with this method (the Allow header lists its methods)',
  },
  CONFLICT: { status: 409, exit: EXIT.OTHER, meaning: 'the request conflicts with the current state' },
  OUTPUT_EXISTS: {
    status: 409,
    exit: EXIT.USAGE,
    meaning: 'the output would replace an input file (pass --force) or an existing file under --no-clobber',
  },
  JOB_NOT_READY: { status: 409, exit: EXIT.OTHER, meaning: 'the job has not finished yet' },
  RATE_LIMITED: { status: 429, exit: EXIT.OTHER, meaning: 'too many requests' },
  CANCELLED: { status: 499, exit: EXIT.INTERRUPTED, meaning: 'the run was cancelled' },
  TIMEOUT: { status: 504, exit: EXIT.OTHER, meaning: 'the run took longer than its time-out' },
  UNAVAILABLE: { status: 503, exit: EXIT.OTHER, meaning: 'a dependency (database, queue, disk) is unavailable' },
  INTERNAL: { status: 500, exit: EXIT.OTHER, meaning: 'an unexpected failure; the message says what failed' },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export interface FieldProblem {
  path: string;
  message: string;
}

export class KilnError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  readonly reason?: string;

  constructor(code: ErrorCode, message: string, opts: { details?: unknown; reason?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'KilnError';
    this.code = code;
    this.details = opts.details;
    this.reason = opts.reason;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }

  get exitCode(): number {
    return ERROR_TABLE[this.code].exit;
  }

  /** The body every route answers with: `{error: {code, message, details?, reason?}}`. */
  toJSON(): { error: { code: ErrorCode; message: string; details?: unknown; reason?: string } } {
    const error: { code: ErrorCode; message: string; details?: unknown; reason?: string } = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    if (this.reason !== undefined) error.reason = this.reason;
    return { error };
  }
}

export function isKilnError(e: unknown): e is KilnError {
  return e instanceof KilnError;
}

/** The longest side each format's encoder takes (sharp refuses more: "too large for the WebP format"). */
const FORMAT_SIDE: Record<string, number> = { JPEG: 65535, WebP: 16383, GIF: 65535, HEIF: 16384 };

/**
 * Turns anything thrown into a KilnError. Known library failures (sharp's "unsupported image format",
 * aborts) are mapped to their proper codes so callers never see a raw stack.
 */
export function toKilnError(e: unknown): KilnError {
  if (e instanceof KilnError) return e;
  const err = e as { name?: string; code?: string; message?: string } | undefined;
  const message = err?.message ?? String(e);
  if (err?.name === 'AbortError' || err?.code === 'ABORT_ERR') return new KilnError('CANCELLED', 'The run was cancelled.', { cause: e });
  if (/exceeds pixel limit/i.test(message))
    return new KilnError('LIMIT_EXCEEDED', `The image has more pixels than the limit of ${MAX_INPUT_PIXELS} (KILN_MAX_PIXELS).`, {
      cause: e,
    });
  const format = /too large for the (JPEG|WebP|GIF|HEIF) format/.exec(message)?.[1];
  if (format)
    return new KilnError(
      'LIMIT_EXCEEDED',
      `The image is too large for ${format === 'HEIF' ? 'HEIF/AVIF' : format}, which holds at most ${FORMAT_SIDE[format]} pixels a side: make it smaller, or choose PNG or TIFF.`,
      { cause: e },
    );
  // Before the decoding failures: libvips words a full disk as a write error of the image format.
  if (err?.code === 'ENOSPC' || err?.code === 'EDQUOT' || diskFull(message))
    return new KilnError('UNAVAILABLE', `The disk is full: ${firstLine(message)}`, { cause: e });
  if (
    /unsupported image format|libpng read error|vipspng|Input buffer contains unsupported|Input file contains unsupported|VipsJpeg: Premature end|corrupt|bad seek|Invalid PNG|pngload|jpegload|webpload|gifload|tiffload|heifload|Input file is missing|Image to composite must have same dimensions or smaller/i.test(
      message,
    )
  ) {
    return new KilnError('UNSUPPORTED_INPUT', `The input could not be decoded: ${firstLine(message)}`, { cause: e });
  }
  return new KilnError('INTERNAL', firstLine(message) || 'Unexpected failure.', { cause: e });
}

/**
 * A program's or library's words for a full disk or quota (ENOSPC, EDQUOT): ffmpeg, ImageMagick, qpdf,
 * LibreOffice and libvips print strerror's text, not a code. The run's temp directory or the output's
 * disk is full, which is the server's state, not the input's fault (UNAVAILABLE: retry later).
 */
export function diskFull(message: string): boolean {
  return /No space left on device|Disk quota exceeded|out of disk space/i.test(message);
}

/**
 * ImageMagick's words for an image past its own resource limits (Debian's policy.xml: 16K pixels a side,
 * 128 MP, 256 MiB of memory, 1 GiB of disk; MAGICK_*_LIMIT): a ResourceLimitError caused by the image's
 * size, not a corrupt file. A BMP declaring 12000 × 12000 was answered UNSUPPORTED_INPUT (415, exit 3).
 */
export function overResourceLimit(message: string): boolean {
  return /cache resources exhausted|width or height exceeds limit|pixel cache allocation failed|time limit exceeded|list length exceeds limit/i.test(
    message,
  );
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}
