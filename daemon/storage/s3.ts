/**
 * Objects in an S3-compatible bucket, through the AWS SDK v3. Writes go through lib-storage's Upload:
 * one PutObject for bodies smaller than a part, a multipart upload (parts of S3_PART_SIZE_MB, four in
 * flight) for larger ones. Reads are streamed, with Range passed through. Credentials come from the
 * SDK's standard chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role).
 */
import { createHash, createHmac } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { KilnError } from '../../src/core/errors.js';
import type { S3Settings } from './config.js';
import type { ByteRange, ObjectInfo, ObjectStorage, PutOptions } from './storage.js';
import { objectKey } from './storage.js';

type Sdk = typeof import('@aws-sdk/client-s3');

function bytes(d: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof d === 'string') return d;
  return ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : new Uint8Array(d);
}

/** The hash SignatureV4 wants (sha256, or HMAC-sha256 when given a secret), on node:crypto. */
class NodeSha256 {
  private h;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h = secret ? createHmac('sha256', bytes(secret)) : createHash('sha256');
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.h.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.h.digest();
  }
}

function isNotFound(e: unknown): boolean {
  const err = e as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  // A missing bucket is a 404 too, but it is the store that is wrong, not the object that is gone.
  if (err?.name === 'NoSuchBucket' || err?.Code === 'NoSuchBucket') return false;
  return err?.name === 'NoSuchKey' || err?.name === 'NotFound' || err?.$metadata?.httpStatusCode === 404;
}

/** A failed call to the store (refused, unreachable, missing bucket, bad credentials): UNAVAILABLE, 503. */
function unavailable(what: string, e: unknown): KilnError {
  if (e instanceof KilnError) return e;
  return new KilnError('UNAVAILABLE', `Object storage: ${what} failed: ${(e as Error).message}`, { cause: e });
}

export class S3Storage implements ObjectStorage {
  readonly kind = 's3' as const;

  private constructor(
    private readonly s: S3Settings,
    private readonly sdk: Sdk,
    private readonly client: S3Client,
  ) {}

  static async open(s: S3Settings): Promise<S3Storage> {
    const sdk = await import('@aws-sdk/client-s3');
    const client = new sdk.S3Client({
      region: s.region,
      ...(s.endpoint ? { endpoint: s.endpoint } : {}),
      forcePathStyle: s.forcePathStyle,
      // Checksums only where S3 requires them: several S3-compatible servers reject the SDK's default
      // CRC32 trailers on streamed bodies.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
    return new S3Storage(s, sdk, client);
  }

  private key(key: string): string {
    return this.s.prefix + objectKey(key);
  }

  async putFile(key: string, file: string, opts: PutOptions = {}): Promise<void> {
    await this.putStream(key, createReadStream(file), opts);
    if (opts.move) await rm(file, { force: true });
  }

  async putStream(key: string, body: Readable, opts: PutOptions = {}): Promise<void> {
    const { Upload } = await import('@aws-sdk/lib-storage');
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.s.bucket, Key: this.key(key), Body: body, ContentType: opts.contentType },
      partSize: this.s.partSizeBytes,
      queueSize: 4,
      // A failed multipart upload is aborted (parts deleted) by the SDK.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (e) {
      // The body's own error (a local file that could not be read) is not the store's.
      if (body.errored) throw e;
      throw unavailable(`writing ${key}`, e);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const r = await this.client.send(
        new this.sdk.GetObjectCommand({
          Bucket: this.s.bucket,
          Key: this.key(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      return r.Body as Readable;
    } catch (e) {
      if (isNotFound(e)) throw new KilnError('NOT_FOUND', `Stored object ${key} is missing.`);
      throw unavailable(`reading ${key}`, e);
    }
  }

  async download(key: string, file: string): Promise<void> {
    try {
      await pipeline(await this.get(key), createWriteStream(file));
    } catch (e) {
      await rm(file, { force: true });
      throw e;
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const r = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.s.bucket, Key: this.key(key) }));
      return { key, size: Number(r.ContentLength ?? 0), modifiedAt: r.LastModified?.getTime() ?? 0 };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw unavailable(`looking up ${key}`, e);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.s.bucket, Key: this.key(key) }));
    } catch (e) {
      throw unavailable(`deleting ${key}`, e);
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    let token: string | undefined;
    do {
      const r = await this.client
        .send(new this.sdk.ListObjectsV2Command({ Bucket: this.s.bucket, Prefix: this.s.prefix + prefix, ContinuationToken: token }))
        .catch((e) => {
          throw unavailable(`listing ${prefix}`, e);
        });
      for (const o of r.Contents ?? []) {
        if (!o.Key) continue;
        yield { key: o.Key.slice(this.s.prefix.length), size: Number(o.Size ?? 0), modifiedAt: o.LastModified?.getTime() ?? 0 };
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  /** Offered only with S3_DOWNLOADS=redirect: the download routes then answer 302 to this URL. */
  async presign(key: string, opts: { expiresS: number; disposition?: string; contentType?: string }): Promise<string | undefined> {
    if (this.s.downloads !== 'redirect') return undefined;
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const base = new URL(this.s.publicEndpoint ?? this.s.endpoint ?? `https://s3.${this.s.region}.amazonaws.com`);
    const objectPath = `/${this.key(key).split('/').map(encodeURIComponent).join('/')}`;
    const pathStyle = this.s.forcePathStyle || !!this.s.endpoint;
    const hostname = pathStyle ? base.hostname : `${this.s.bucket}.${base.hostname}`;
    const basePath = base.pathname.replace(/\/+$/, '');
    const query: Record<string, string> = {};
    if (opts.disposition) query['response-content-disposition'] = opts.disposition;
    if (opts.contentType) query['response-content-type'] = opts.contentType;
    const signer = new SignatureV4({
      credentials: this.client.config.credentials,
      region: this.s.region,
      service: 's3',
      sha256: NodeSha256,
    });
    const host = base.port ? `${hostname}:${base.port}` : hostname;
    const signed = await signer.presign(
      {
        method: 'GET',
        protocol: base.protocol,
        hostname,
        port: base.port ? Number(base.port) : undefined,
        path: `${basePath}${pathStyle ? `/${this.s.bucket}` : ''}${objectPath}`,
        query,
        headers: { host },
      },
      { expiresIn: opts.expiresS },
    );
    const url = new URL(`${base.protocol}//${host}${signed.path}`);
    for (const [k, v] of Object.entries(signed.query ?? {})) url.searchParams.set(k, String(v));
    return url.toString();
  }

  async ping(): Promise<void> {
    await this.client.send(new this.sdk.HeadBucketCommand({ Bucket: this.s.bucket }));
  }

  describe(): Record<string, unknown> {
    return {
      kind: 's3',
      endpoint: this.s.endpoint ?? null,
      bucket: this.s.bucket,
      region: this.s.region,
      prefix: this.s.prefix || null,
      downloads: this.s.downloads,
    };
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
