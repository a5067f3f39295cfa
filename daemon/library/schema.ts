/** Tables of the file library and of saved pipelines (migrations 0200, 0201 and 0720). */
import type { Generated } from 'kysely';
import type { JobRow } from '../store/jobs.js';

export interface LibraryBlobsTable {
  /** sha256 of the content, hex: the file lives at DATA_DIR/library/blobs/<hash[0..2]>/<hash>. */
  hash: string;
  size: number;
  /** How many versions point at this content; at 0 the object is removed by a later sweep (blobs.ts). */
  refs: number;
  created_at: number;
  /** pending (being written), ready, deleting (claimed by a sweep): migration 0730. */
  state: 'pending' | 'ready' | 'deleting';
  /** Epoch ms of the last change of state or count. */
  touched_at: number;
}

export interface LibraryItemsTable {
  id: string;
  owner_id: string;
  name: string;
  /** Of the newest version, copied here so listing and filtering need no join. */
  content_type: string;
  size: number;
  latest_version: number;
  /** The highest version number ever given (migration 0760): the next version is this + 1, never a deleted one's. */
  top_version: number;
  /** private | team (migration 0720, daemon/library/sharing.ts); the database default is private. */
  scope: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface LibraryVersionsTable {
  id: string;
  item_id: string;
  /** 1, 2, 3… per item; numbers of deleted versions are never reused. */
  version: number;
  blob_hash: string;
  name: string;
  size: number;
  content_type: string;
  created_by: string;
  created_at: number;
  /** upload | tool | restore */
  source: string;
  tool: string | null;
  /** JSON of the (redacted) settings the tool ran with. */
  settings: string | null;
  job_id: string | null;
  /** For restores: the version copied. */
  restored_from: number | null;
}

export interface PipelinesTable {
  id: string;
  owner_id: string;
  name: string;
  description: string | null;
  /** The pipeline JSON ({name, description, steps}) as saved. */
  definition: string;
  /** private | team (migration 0720, daemon/library/sharing.ts); the database default is private. */
  scope: Generated<string>;
  created_at: number;
  updated_at: number;
}

declare module '../store/schema.js' {
  interface Database {
    library_blobs: LibraryBlobsTable;
    library_items: LibraryItemsTable;
    library_versions: LibraryVersionsTable;
    pipelines: PipelinesTable;
  }
}

export type { JobRow };
