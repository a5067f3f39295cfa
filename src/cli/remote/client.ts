/**
 * HTTP client for a kiln server (undici): JSON calls, streaming multipart uploads (files are sent as
 * file-backed Blobs, never read into memory), streaming downloads, and the job progress stream
 * (server-sent events). Every error the server sends comes back as a KilnError with the server's
 * code and message, so the exit code follows the same table as a local run.
 */
import { openAsBlob } from 'node:fs';
import { Readable } from 'node:stream';
import { regularFile } from '../../core/regular-file.js';
import { KilnError, ERROR_TABLE, type ErrorCode } from '../../core/errors.js';
import { VERSION } from '../../core/version.js';
import { pinnedDispatcher, untrustedCertificateError } from './transport.js';

export interface ServerErrorBody {
  code: string;
  message: string;
  details?: unknown;
  reason?: string;
}

type Undici = typeof import('undici');
type Dispatcher = import('undici').Dispatcher;
let undici: Promise<Undici> | undefined;
function lib(): Promise<Undici> {
  return (undici ??= import('undici'));
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'USAGE_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'LIMIT_EXCEEDED',
  415: 'UNSUPPORTED_INPUT',
  429: 'RATE_LIMITED',
  499: 'CANCELLED',
  501: 'ENGINE_MISSING',
  // A reverse proxy's answer when the daemon behind it is down or restarting: retry later, as for 503.
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'TIMEOUT',
};

/** A server error as a KilnError: the server's own code and message, untouched. */
export function serverError(body: ServerErrorBody | undefined, status: number): KilnError {
  const known = body && body.code in ERROR_TABLE;
  const code: ErrorCode = known ? (body!.code as ErrorCode) : (STATUS_CODES[status] ?? 'INTERNAL');
  const message = body?.message ?? `The server answered HTTP ${status}.`;
  return new KilnError(code, message, { details: body?.details, reason: body?.reason });
}

export interface FormPart {
  field: string;
  /** A local file path (streamed), or a text value. */
  path?: string;
  filename?: string;
  value?: string;
}

/**
 * A file to upload, checked as a local run checks its inputs (regularFile): a missing file was "Unable
 * to open file as blob" and a directory failed mid-request as "Cannot reach the kiln server" (exit 1).
 */
async function uploadBlob(p: string): Promise<never> {
  await regularFile(p);
  return (await openAsBlob(p)) as never;
}

export class RemoteClient {
  private dispatcher?: Promise<Dispatcher>;

  constructor(
    readonly server: string,
    private readonly apiKey?: string,
    /** SHA-256 fingerprint of the server's certificate pinned by `kiln login` (transport.ts). */
    readonly tlsPin?: string,
    /** A 401 says how to get a key (every command but `kiln login` itself, whose 401 is a wrong password). */
    private readonly loginHint = false,
  ) {}

  /**
   * An absolute URL on this server. Paths and links come from the server too (a job's `downloadUrl`):
   * one that points at another origin is refused, so the API key is never sent anywhere else.
   */
  url(p: string): string {
    const u = new URL(p, this.server + '/');
    const own = new URL(this.server).origin;
    if (u.origin !== own)
      throw new KilnError('FORBIDDEN', `The server at ${this.server} pointed to another origin (${u.origin}); kiln only talks to ${own}.`);
    return u.toString();
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'user-agent': `kiln-cli/${VERSION}`, ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}), ...extra };
  }

  private async send(
    p: string,
    init: { method: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response> {
    const { fetch } = await lib();
    if (this.tlsPin && this.server.startsWith('https:')) this.dispatcher ??= pinnedDispatcher(this.server, this.tlsPin);
    const dispatcher = this.dispatcher ? { dispatcher: await this.dispatcher } : {};
    let target = this.url(p);
    try {
      // Redirects are followed here, and only within the server's origin (the key goes with them).
      for (let hops = 0; ; hops++) {
        const res = (await fetch(target, {
          method: init.method,
          body: init.body as never,
          headers: this.headers(init.headers),
          signal: init.signal,
          redirect: 'manual',
          ...dispatcher,
        })) as unknown as Response;
        const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
        if (!location || hops >= 5 || init.method !== 'GET') return res;
        await res.body?.cancel().catch(() => undefined);
        target = this.url(new URL(location, target).toString());
      }
    } catch (e) {
      if (e instanceof KilnError) throw e;
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'AbortError') throw e;
      // A pinned certificate that changed: the connection was dropped before anything was sent.
      if (err.cause instanceof KilnError) throw err.cause;
      const why = err.cause?.code ?? err.cause?.message ?? err.message;
      throw (
        untrustedCertificateError(this.server, why, e) ??
        new KilnError('UNAVAILABLE', `Cannot reach the kiln server at ${this.server} (${why}).`, { cause: e })
      );
    }
  }

  /** Throws the server's error for a non-2xx answer. */
  async check(res: Response): Promise<Response> {
    if (res.ok) return res;
    if (res.status === 401 && this.loginHint) throw this.withLoginHint(await this.failure(res));
    throw await this.failure(res);
  }

  /**
   * The server's 401 speaks to HTTP clients ("send Authorization: Bearer…"); a CLI user needs the
   * command. It was printed only after a tool run's failure, so `kiln files`, `jobs` or `pipeline`
   * without a key ended on the server's words alone.
   */
  private withLoginHint(e: KilnError): KilnError {
    const hint = this.apiKey
      ? `The key kiln sent to ${this.server} was refused: run \`kiln login ${this.server}\` again, or check KILN_API_KEY.`
      : `No API key for ${this.server}: run \`kiln login ${this.server}\` or set KILN_API_KEY.`;
    return new KilnError(e.code, `${e.message} ${hint}`, { details: e.details, reason: e.reason });
  }

  private async failure(res: Response): Promise<KilnError> {
    const text = await res.text().catch(() => '');
    let body: { error?: ServerErrorBody } | undefined;
    try {
      body = JSON.parse(text) as { error?: ServerErrorBody };
    } catch {
      body = undefined;
    }
    if (!body?.error)
      return serverError(
        {
          code: STATUS_CODES[res.status] ?? 'INTERNAL',
          message: `The server answered HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}.`,
        },
        res.status,
      );
    return serverError(body.error, res.status);
  }

  async json<T>(method: string, p: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.send(p, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      signal,
    });
    await this.check(res);
    return (res.status === 204 ? undefined : await this.body(res)) as T;
  }

  /**
   * A 2xx answer's JSON. Anything else (a proxy's sign-in page, a web server at the wrong URL) is not a
   * kiln server: said so, rather than INTERNAL "Unexpected token '<'… is not valid JSON".
   */
  private async body(res: Response): Promise<unknown> {
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      const type = res.headers.get('content-type')?.split(';')[0] || 'no content type';
      throw new KilnError(
        'UNAVAILABLE',
        `${this.server} answered HTTP ${res.status} with ${type} (${JSON.stringify(text.slice(0, 60))}), not the JSON of a kiln server: check that the URL is the kiln daemon's, not a proxy's sign-in page or another site.`,
      );
    }
  }

  /** Multipart POST; file parts stream from disk. Returns the status and the JSON body. */
  async postForm(
    p: string,
    parts: FormPart[],
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const { FormData } = await lib();
    const fd = new FormData();
    for (const part of parts) {
      if (part.path !== undefined) fd.append(part.field, await uploadBlob(part.path), part.filename ?? 'upload');
      else fd.append(part.field, part.value ?? '');
    }
    const res = await this.send(p, { method: 'POST', body: fd, signal, headers });
    await this.check(res);
    return { status: res.status, body: (await this.body(res)) as Record<string, unknown> };
  }

  async postJson(
    p: string,
    body: unknown,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await this.send(p, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
      signal,
    });
    await this.check(res);
    return { status: res.status, body: (await this.body(res)) as Record<string, unknown> };
  }

  /** A GET whose body the caller streams. */
  async stream(p: string, signal?: AbortSignal): Promise<Response> {
    return this.check(await this.send(p, { method: 'GET', signal }));
  }

  /**
   * A GET whose body is a file to save: a connection that drops before the last byte (undici's bare
   * "terminated", which reached the user as INTERNAL) is UNAVAILABLE naming the server and how much came.
   */
  async download(p: string, signal?: AbortSignal): Promise<Readable> {
    const res = await this.stream(p, signal);
    const body = res.body as unknown as AsyncIterable<Uint8Array> | null;
    const expected = res.headers.get('content-length');
    const server = this.server;
    return Readable.from(
      (async function* () {
        let got = 0;
        try {
          for await (const chunk of body ?? []) {
            got += chunk.length;
            yield chunk;
          }
        } catch (e) {
          if ((e as Error).name === 'AbortError' || signal?.aborted) throw e;
          const why = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
          throw new KilnError(
            'UNAVAILABLE',
            `The connection to the kiln server at ${server} dropped during the download (${got}${expected ? ` of ${expected}` : ''} bytes received, ${why}). Run the command again.`,
            { cause: e },
          );
        }
      })(),
      { objectMode: false },
    );
  }

  /**
   * The job's progress events until `completed` or `failed`. Reconnects (with Last-Event-ID) when
   * the stream drops without a final event; the server then replays the job's current state. Only
   * reconnects that brought nothing count against the limit: a proxy that cuts every stream after a
   * minute or two (a CDN's cap on a response's duration) made `kiln jobs watch` give up on a long job,
   * UNAVAILABLE after its fifth reconnect, while every one of them was delivering progress.
   */
  async *events(jobId: string, signal?: AbortSignal): AsyncGenerator<{ type: string; data: Record<string, unknown> }> {
    let lastId: string | undefined;
    /** Connections in a row that failed or closed before delivering an event. */
    let failures = 0;
    for (;;) {
      let res: Response;
      try {
        res = await this.check(
          await this.send(`/api/v1/jobs/${encodeURIComponent(jobId)}/progress`, {
            method: 'GET',
            headers: { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
            signal,
          }),
        );
      } catch (e) {
        if ((e as KilnError).code === 'UNAVAILABLE' && failures < 5 && !signal?.aborted) {
          failures++;
          await sleep(500 * failures, signal);
          continue;
        }
        throw e;
      }
      const decoder = new TextDecoder();
      let buf = '';
      let heard = false;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let type = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const c = line.indexOf(':');
              const field = c < 0 ? line : line.slice(0, c);
              const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
              if (field === 'event') type = value;
              else if (field === 'data') data.push(value);
              else if (field === 'id') lastId = value;
            }
            if (!data.length) continue;
            let parsed: Record<string, unknown>;
            try {
              parsed = JSON.parse(data.join('\n')) as Record<string, unknown>;
            } catch {
              continue;
            }
            heard = true;
            yield { type, data: parsed };
            if (type === 'completed' || type === 'failed') return;
          }
        }
      } catch (e) {
        if (signal?.aborted) throw e;
      }
      if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
      if (heard) failures = 0;
      if (failures >= 5) throw new KilnError('UNAVAILABLE', `The progress stream of job ${jobId} keeps closing before the job ends.`);
      failures++;
      await sleep(300, signal);
    }
  }

  /** Cancels a job; a job that already ended is not an error here. */
  async cancel(jobId: string): Promise<void> {
    const ac = AbortSignal.timeout(5000);
    try {
      await this.json('POST', `/api/v1/jobs/${encodeURIComponent(jobId)}/cancel`, undefined, ac);
    } catch (e) {
      if ((e as KilnError).code !== 'CONFLICT') throw e;
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new DOMException('aborted', 'AbortError'));
      },
      { once: true },
    );
  });
}

/** A client for the chosen server with the stored (or KILN_API_KEY) key. */
export async function connect(server: { url: string; profile: string }): Promise<RemoteClient> {
  const { loadKey } = await import('../credentials.js');
  // Not through conf: it pulls in when-exit, whose SIGINT hook kills the process before a run can
  // cancel its remote jobs.
  const { readProfileSync } = await import('../profiles.js');
  const p = readProfileSync(server.profile);
  const key = await loadKey(server.profile, server.url, p.server === server.url ? p.keyStore : undefined);
  // The pin belongs to the profile's server: another URL is checked against the system's authorities.
  return new RemoteClient(server.url, key, p.server === server.url ? p.tlsFingerprint : undefined, true);
}
