/**
 * The file library: items owned by a user, each with numbered versions whose content lives once per
 * distinct sha256 in the blob store. Used by the HTTP routes, by `kiln files` on a local data dir, and
 * by tool runs through the FileLibraryHook (fileId → input, output → new version).
 *
 * Ownership: a viewer sees its own items, the `team` items of its teammates (sharing.ts), and all
 * items when its role has files:all; anything else is NOT_FOUND, so item ids leak nothing. Only the
 * owner and admins change an item (a teammate gets FORBIDDEN). The quota is in quota.ts, the JSON
 * views in views.ts, the list query in listing.ts, what a new version records in content.ts.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely, Selectable } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { safeFileName, versionFileName } from '../../src/core/paths.js';
import type { InputFile } from '../../src/core/tool.js';
import { roleHas } from '../auth/permissions.js';
import { newId } from '../auth/secrets.js';
import { LocalStorage } from '../storage/local.js';
import type { ObjectStorage } from '../storage/storage.js';
import type { Database } from '../store/schema.js';
import type { JobRow } from '../store/jobs.js';
import { requireLiveUser } from '../store/users.js';
import { BlobStore, libraryDir } from './blobs.js';
import { type ContentFacts, describeContent, type NewContent, type VersionOrigin, versionRow } from './content.js';
import { type ItemPage, type ListQuery, listItems } from './listing.js';
import { KeyedMutex } from './mutex.js';
import { LibraryQuota } from './quota.js';
import type { LibraryItemsTable, LibraryVersionsTable } from './schema.js';
import { accessTo, checkScopeFor, onlyOwnerChanges, parseScope, type Scope, type Sharer } from './sharing.js';

export type { NewContent, VersionOrigin } from './content.js';

export type Viewer = Sharer;

export type ItemRow = Selectable<LibraryItemsTable>;
export type VersionRow = LibraryVersionsTable;

export class LibraryService {
  readonly blobs: BlobStore;
  readonly quota: LibraryQuota;
  private items = new KeyedMutex();

  constructor(
    private readonly db: Kysely<Database>,
    readonly dataDir: string,
    quotaBytes: number | ((ownerId: string) => Promise<number>),
    /** Where content lives (daemon/storage); default: files under dataDir. */
    storage: ObjectStorage = new LocalStorage(dataDir),
  ) {
    this.blobs = new BlobStore(db, storage, path.join(libraryDir(dataDir), 'tmp'));
    this.quota = new LibraryQuota(db, quotaBytes);
  }

  private seesAll(v: Viewer): boolean {
    return roleHas(v.role, 'files:all');
  }

  /** The item when the viewer may see it; NOT_FOUND otherwise (also for others' private items). */
  async item(viewer: Viewer, id: string): Promise<ItemRow> {
    return (await this.reach(viewer, id)).row;
  }

  /** The item when the viewer may change it: its owner or an admin (a teammate gets FORBIDDEN). */
  async editable(viewer: Viewer, id: string): Promise<ItemRow> {
    const { row, access } = await this.reach(viewer, id);
    if (access === 'team') throw onlyOwnerChanges(`Library item ${row.name}`);
    return row;
  }

  private async reach(viewer: Viewer, id: string) {
    const row = await this.db.selectFrom('library_items').selectAll().where('id', '=', id).executeTakeFirst();
    const access = row && (await accessTo(this.db, row, viewer, this.seesAll(viewer)));
    if (!row || !access) throw new KilnError('NOT_FOUND', `No library item ${id}.`);
    return { row, access };
  }

  async list(viewer: Viewer, q: ListQuery): Promise<ItemPage> {
    return listItems(this.db, viewer, this.seesAll(viewer), q);
  }

  async versions(item: ItemRow): Promise<VersionRow[]> {
    return this.db.selectFrom('library_versions').selectAll().where('item_id', '=', item.id).orderBy('version', 'desc').execute();
  }

  async version(item: ItemRow, n?: number): Promise<VersionRow> {
    const v = await this.db
      .selectFrom('library_versions')
      .selectAll()
      .where('item_id', '=', item.id)
      .where('version', '=', n ?? item.latest_version)
      .executeTakeFirst();
    if (!v) throw new KilnError('NOT_FOUND', `Library item ${item.id} has no version ${n ?? item.latest_version}.`);
    return v;
  }

  /** Removes scratch files (interrupted uploads) older than `ageMs`. */
  async sweepScratch(ageMs: number): Promise<number> {
    const dir = await this.blobs.tmpDir();
    let n = 0;
    for (const name of await readdir(dir)) {
      const p = path.join(dir, name);
      const st = await stat(p).catch(() => undefined);
      if (st && Date.now() - st.mtimeMs > ageMs) {
        await rm(p, { force: true, recursive: true });
        n++;
      }
    }
    return n;
  }

  blobPath(v: VersionRow): string {
    return this.blobs.pathOf(v.blob_hash);
  }

  /** A new item whose first version is `content`. */
  async create(viewer: Viewer, content: NewContent, opts: { name?: string; move?: boolean; scope?: unknown } = {}): Promise<ItemRow> {
    try {
      const scope = parseScope(opts.scope) ?? 'private';
      await checkScopeFor(this.db, viewer.id, scope);
      const d = await describeContent(content);
      const release = await this.quota.reserve(viewer.id, d.hash, d.size);
      try {
        return await this.insertItem(viewer, content, d, { ...opts, scope });
      } finally {
        await release();
      }
    } finally {
      if (opts.move ?? true) await rm(content.path, { force: true });
    }
  }

  /** Stores the content and records the item; runs under the quota reservation of its size. */
  private async insertItem(
    viewer: Viewer,
    content: NewContent,
    d: ContentFacts,
    opts: { name?: string; move?: boolean; scope: Scope },
  ): Promise<ItemRow> {
    await this.blobs.add(content.path, d.hash, d.size, { move: opts.move ?? true });
    const now = Date.now();
    const name = opts.name ? safeFileName(opts.name, d.name) : d.name;
    const item: ItemRow = {
      id: newId(),
      owner_id: viewer.id,
      name,
      content_type: d.contentType,
      size: d.size,
      latest_version: 1,
      top_version: 1,
      scope: opts.scope,
      created_at: now,
      updated_at: now,
    };
    try {
      await requireLiveUser(this.db, viewer.id); // an upload of a user deleted meanwhile is refused here (#21.9)
      await this.db.insertInto('library_items').values(item).execute();
      await this.db
        .insertInto('library_versions')
        // Version 1 carries the name the item was given (the `name` field), not the uploaded file's:
        // downloads are named after the version, and one named photo.png must not arrive as upload-3.tmp.
        .values(versionRow(item.id, 1, { ...d, name }, viewer.id, now, { source: 'upload' }))
        .execute();
    } catch (e) {
      await this.db
        .deleteFrom('library_items')
        .where('id', '=', item.id)
        .execute()
        .catch(() => {});
      await this.blobs.release(d.hash);
      throw e;
    }
    return item;
  }

  /** Adds `content` as the newest version of a visible item. */
  async addVersion(
    viewer: Viewer,
    itemId: string,
    content: NewContent,
    origin: VersionOrigin,
    opts: { move?: boolean } = {},
  ): Promise<{ item: ItemRow; version: VersionRow }> {
    const move = opts.move ?? true;
    try {
      const item = await this.editable(viewer, itemId);
      const d = await describeContent(content);
      return await this.items.run(item.id, async () => {
        const release = await this.quota.reserve(item.owner_id, d.hash, d.size);
        try {
          await this.blobs.add(content.path, d.hash, d.size, { move });
          return await this.appendVersion(item.id, viewer.id, d, origin);
        } finally {
          await release();
        }
      });
    } finally {
      if (move) await rm(content.path, { force: true });
    }
  }

  /** Must run under the item's mutex; the blob reference is already taken. */
  private async appendVersion(
    itemId: string,
    by: string,
    d: ContentFacts,
    origin: VersionOrigin,
  ): Promise<{ item: ItemRow; version: VersionRow }> {
    const current = await this.db.selectFrom('library_items').selectAll().where('id', '=', itemId).executeTakeFirst();
    if (!current) {
      await this.blobs.release(d.hash);
      throw new KilnError('NOT_FOUND', `No library item ${itemId}.`);
    }
    // Numbers are never reused, even after the newest version was deleted: top_version remembers the
    // highest one given (max(version) forgot a deleted newest one, whose number went to the next upload).
    const n = Math.max(Number(current.top_version), current.latest_version) + 1;
    const now = Date.now();
    const version = versionRow(itemId, n, d, by, now, origin);
    try {
      await this.db.insertInto('library_versions').values(version).execute();
    } catch (e) {
      await this.blobs.release(d.hash);
      throw e;
    }
    await this.db
      .updateTable('library_items')
      .set({ latest_version: n, top_version: n, content_type: d.contentType, size: d.size, updated_at: now })
      .where('id', '=', itemId)
      .execute();
    return { item: { ...current, latest_version: n, top_version: n, content_type: d.contentType, size: d.size, updated_at: now }, version };
  }

  /** Makes an older version the newest again (a new version pointing at the same content). */
  async restore(viewer: Viewer, itemId: string, n: number): Promise<{ item: ItemRow; version: VersionRow }> {
    const item = await this.editable(viewer, itemId);
    return this.items.run(item.id, async () => {
      const old = await this.version(item, n);
      await this.blobs.ref(old.blob_hash);
      return this.appendVersion(
        item.id,
        viewer.id,
        { hash: old.blob_hash, size: Number(old.size), contentType: old.content_type, name: old.name },
        { source: 'restore', restoredFrom: n, tool: old.tool, settings: old.settings },
      );
    });
  }

  /** Renames the item and/or changes its scope (owner or admin only). */
  async update(viewer: Viewer, itemId: string, patch: { name?: string; scope?: unknown }): Promise<ItemRow> {
    const item = await this.editable(viewer, itemId);
    const set: Partial<ItemRow> = {};
    if (patch.name !== undefined) {
      set.name = safeFileName(patch.name.trim(), '');
      if (!set.name)
        throw new KilnError('VALIDATION_ERROR', 'name: give a non-empty file name.', { details: [{ path: 'name', message: 'required' }] });
    }
    const scope = parseScope(patch.scope);
    if (scope) {
      await checkScopeFor(this.db, item.owner_id, scope);
      set.scope = scope;
    }
    set.updated_at = Date.now();
    await this.db.updateTable('library_items').set(set).where('id', '=', item.id).execute();
    return { ...item, ...set };
  }

  async deleteItem(viewer: Viewer, itemId: string): Promise<void> {
    const item = await this.editable(viewer, itemId);
    await this.items.run(item.id, async () => {
      const versions = await this.versions(item);
      // One transaction: a failure between the two never leaves versions without their item, or an item without versions.
      await this.db.transaction().execute(async (tx) => {
        await tx.deleteFrom('library_versions').where('item_id', '=', item.id).execute();
        await tx.deleteFrom('library_items').where('id', '=', item.id).execute();
      });
      for (const v of versions) await this.blobs.release(v.blob_hash);
    });
  }

  /** Deletes one version; the only version cannot go (delete the item instead). */
  async deleteVersion(viewer: Viewer, itemId: string, n: number): Promise<ItemRow> {
    const item = await this.editable(viewer, itemId);
    return this.items.run(item.id, async () => {
      const v = await this.version(item, n);
      const versions = await this.versions(item);
      if (versions.length === 1)
        throw new KilnError('CONFLICT', `Version ${n} is the only version of ${item.name}; delete the item instead.`);
      await this.db.deleteFrom('library_versions').where('id', '=', v.id).execute();
      await this.blobs.release(v.blob_hash);
      const newest = versions.find((x) => x.id !== v.id)!;
      const now = Date.now();
      // Deleting the newest makes the one before it current.
      const patch = { latest_version: newest.version, content_type: newest.content_type, size: Number(newest.size), updated_at: now };
      await this.db.updateTable('library_items').set(patch).where('id', '=', item.id).execute();
      return { ...item, ...patch };
    });
  }

  /** Copies the item's newest version into `dir` as a tool input. */
  async materialize(viewer: Viewer, itemId: string, dir: string): Promise<InputFile> {
    const item = await this.item(viewer, itemId);
    const v = await this.version(item);
    // Named as the item is now: after a rename, the run's output and the version it saves took the
    // name the newest version was uploaded under (photo-resize.png for an item renamed holiday.png).
    const name = versionFileName(item.name, v.name);
    const dest = path.join(dir, `lib-${name}`);
    // A copy (a reflink where the file system has them), so a tool can never alter stored content.
    await this.blobs.copyTo(v.blob_hash, dest);
    return { path: dest, name, size: Number(v.size) };
  }

  /** Saves a finished job's output as a new version of the item; returns the item id. */
  async saveJobOutput(viewer: Viewer, itemId: string, job: JobRow): Promise<string> {
    if (!job.output_path || !job.output_name)
      throw new KilnError('VALIDATION_ERROR', `${job.tool} produced no file to save as a new version of library item ${itemId}.`);
    await this.addVersion(
      viewer,
      itemId,
      { path: job.output_path, name: job.output_name },
      { source: 'tool', tool: job.tool, settings: job.settings, jobId: job.id },
      { move: false },
    );
    return itemId;
  }
}
