/**
 * What a new version records: the content handed to the library (its hash, size and sniffed type) and
 * the version row with where it came from (an upload, a tool run, a restore).
 */
import { stat } from 'node:fs/promises';
import { safeFileName } from '../../src/core/paths.js';
import { sniffFile } from '../../src/core/sniff.js';
import { newId } from '../auth/secrets.js';
import { hashFile } from './blobs.js';
import type { LibraryVersionsTable } from './schema.js';

export interface NewContent {
  /** A file the library may take over (moved into the blob store, or deleted). */
  path: string;
  name: string;
  /** Known already when the upload hashed it while streaming. */
  hash?: string;
  size?: number;
}

export interface VersionOrigin {
  source: 'upload' | 'tool' | 'restore';
  tool?: string | null;
  settings?: string | null;
  jobId?: string | null;
  restoredFrom?: number | null;
}

/** The content as stored: its blob hash, size, sniffed type and safe file name. */
export interface ContentFacts {
  hash: string;
  size: number;
  contentType: string;
  name: string;
}

export async function describeContent(c: NewContent): Promise<ContentFacts> {
  const name = safeFileName(c.name, 'file');
  const hash = c.hash ?? (await hashFile(c.path));
  const size = c.size ?? (await stat(c.path)).size;
  const kind = await sniffFile(c.path, name);
  return { hash, size, contentType: kind.mime, name };
}

export function versionRow(
  itemId: string,
  version: number,
  d: ContentFacts,
  by: string,
  now: number,
  origin: VersionOrigin,
): LibraryVersionsTable {
  return {
    id: newId(),
    item_id: itemId,
    version,
    blob_hash: d.hash,
    name: d.name,
    size: d.size,
    content_type: d.contentType,
    created_by: by,
    created_at: now,
    source: origin.source,
    tool: origin.tool ?? null,
    settings: origin.settings ?? null,
    job_id: origin.jobId ?? null,
    restored_from: origin.restoredFrom ?? null,
  };
}
