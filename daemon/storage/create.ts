/** Picks the object storage from the configuration: S3 when S3_BUCKET is set, else the shared directory. */
import type { DaemonConfig } from '../config.js';
import { LocalStorage } from './local.js';
import type { ObjectStorage } from './storage.js';

export async function createStorage(config: Pick<DaemonConfig, 'sharedDir' | 's3'>): Promise<ObjectStorage> {
  if (!config.s3) return new LocalStorage(config.sharedDir);
  const { S3Storage } = await import('./s3.js');
  return S3Storage.open(config.s3);
}
