/**
 * Limits of a multipart request counted on the wire, as its bytes arrive — not after the parser has
 * handed over a part. The multipart plugin buffers every text field whole (up to MAX_FIELD_KB) before it
 * is seen, keeps reading parts nobody asked for, and drops some silently (an oversized field declared
 * `application/json` only fails the request at its very end): counting only what reaches the route let
 * a request stream hundreds of MB of text through the parser (issue #21 item 7).
 *
 * Every byte of the body is either file content (counted by the upload's own counter) or text and part
 * headers; once the latter pass the text budget by more than SLACK, or the body passes MAX_REQUEST_MB,
 * the request is stopped at once: the parser is cut off and the route sees the error.
 */
import type { FastifyRequest } from 'fastify';
import type { KilnError } from '../../src/core/errors.js';

/**
 * Part headers and boundaries (a few hundred bytes a part) plus file bytes the parser has received but
 * not yet passed to the upload's counter (bounded by stream buffers).
 */
const SLACK = 1048576;

export interface WireLimits {
  maxRequestBytes: number;
  textBudgetBytes: number;
  tooBig: () => KilnError;
  textTooBig: () => KilnError;
}

export class WireGuard {
  private seen = 0;
  private fileBytes = 0;
  private fileCut?: () => KilnError;
  private stopped = false;
  private readonly onData = (chunk: Buffer) => this.check(chunk.length);

  constructor(
    private readonly request: FastifyRequest,
    private readonly limits: WireLimits,
  ) {
    request.raw.on('data', this.onData);
  }

  /** File content that reached the upload's counter. */
  countFile(n: number): void {
    this.fileBytes += n;
  }

  /**
   * A file passed its size limit: the parser skips the rest of it, and those bytes are not text — the
   * error to give, should the guard stop the request meanwhile, is the file's.
   */
  fileTruncated(error: () => KilnError): void {
    this.fileCut ??= error;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.request.raw.off('data', this.onData);
  }

  private check(n: number): void {
    this.seen += n;
    let error: KilnError | undefined;
    if (this.seen > this.limits.maxRequestBytes) error = this.limits.tooBig();
    else if (this.seen - this.fileBytes > this.limits.textBudgetBytes + SLACK) error = (this.fileCut ?? this.limits.textTooBig)();
    if (!error) return;
    this.stop();
    const raw = this.request.raw;
    raw.unpipe();
    // The multipart plugin listens for request errors: it ends the parts iteration (and any file stream
    // being read) with this error, which the route answers after draining the rest of the body.
    if (raw.listenerCount('error') > 0) raw.emit('error', error);
  }
}
