/** S3_* settings: object storage replaces the local blob directory when S3_BUCKET is set. */
import { KilnError } from '../../src/core/errors.js';

export interface S3Settings {
  bucket: string;
  region: string;
  /** An S3-compatible server (MinIO, Ceph, s3rver…); unset for AWS itself. */
  endpoint?: string;
  /** The endpoint clients reach for pre-signed downloads, when it differs from the daemons' (S3_PUBLIC_ENDPOINT). */
  publicEndpoint?: string;
  forcePathStyle: boolean;
  /** Prepended to every key, so one bucket can hold several deployments (S3_PREFIX). */
  prefix: string;
  /** proxy: the daemon streams downloads; redirect: 302 to a pre-signed URL (S3_DOWNLOADS). */
  downloads: 'proxy' | 'redirect';
  partSizeBytes: number;
}

export function resolveS3Settings(env: NodeJS.ProcessEnv = process.env): S3Settings | undefined {
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) {
    if (env.S3_ENDPOINT?.trim()) throw new KilnError('USAGE_ERROR', 'S3_ENDPOINT is set but S3_BUCKET is not: name the bucket.');
    return undefined;
  }
  const downloads = (env.S3_DOWNLOADS?.trim() || 'proxy') as S3Settings['downloads'];
  if (downloads !== 'proxy' && downloads !== 'redirect')
    throw new KilnError('USAGE_ERROR', `S3_DOWNLOADS must be proxy or redirect (got "${env.S3_DOWNLOADS}").`);
  const part = Number(env.S3_PART_SIZE_MB?.trim() || 8);
  // S3 refuses parts below 5 MiB (except the last).
  if (!Number.isFinite(part) || part < 5)
    throw new KilnError('USAGE_ERROR', `S3_PART_SIZE_MB must be a number ≥ 5 (got "${env.S3_PART_SIZE_MB}").`);
  const prefix = env.S3_PREFIX?.trim().replace(/^\/+|\/+$/g, '') ?? '';
  return {
    bucket,
    region: env.S3_REGION?.trim() || env.AWS_REGION?.trim() || 'us-east-1',
    endpoint: env.S3_ENDPOINT?.trim() || undefined,
    publicEndpoint: env.S3_PUBLIC_ENDPOINT?.trim() || undefined,
    forcePathStyle: /^(1|true|yes|on)$/i.test(env.S3_FORCE_PATH_STYLE?.trim() ?? ''),
    prefix: prefix ? `${prefix}/` : '',
    downloads,
    partSizeBytes: Math.round(part * 1048576),
  };
}
