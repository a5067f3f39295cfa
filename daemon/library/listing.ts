/**
 * The library's list query: the page of items a viewer may see (sharing.ts decides which), narrowed by
 * owner, name and type, newest first.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database } from '../store/schema.js';
import type { LibraryItemsTable } from './schema.js';
import { scopeCondition, type ScopeFilter, type Sharer } from './sharing.js';

export interface ListQuery {
  page?: number;
  pageSize?: number;
  type?: string;
  name?: string;
  owner?: string;
  scope?: ScopeFilter;
}

export interface ItemPage {
  items: Selectable<LibraryItemsTable>[];
  total: number;
  page: number;
  pageSize: number;
}

/** `type` filters: a family (image, video, audio, text), a full content type, or an extension. */
function typeFilter(type: string): { prefix?: string; exact?: string; ext?: string } {
  const t = type.trim().toLowerCase();
  if (t.includes('/')) return t.endsWith('/*') ? { prefix: t.slice(0, -1) } : { exact: t };
  if (['image', 'video', 'audio', 'text', 'font'].includes(t)) return { prefix: `${t}/` };
  if (t === 'pdf') return { exact: 'application/pdf' };
  return { ext: t.replace(/^\./, '') };
}

/** Extensions that name one format: `type=jpg` also finds photo.jpeg. */
const SAME_FORMAT: string[][] = [
  ['jpg', 'jpeg', 'jpe'],
  ['tif', 'tiff'],
  ['htm', 'html'],
  ['mpg', 'mpeg'],
];

function extensionsLike(ext: string): string[] {
  const e = ext.replace(/^\./, '');
  return SAME_FORMAT.find((g) => g.includes(e)) ?? [e];
}

/**
 * An extension filter matches the name the newest version downloads under (versionFileName): the
 * newest version's own extension when it has one, else the item's. The item's name alone listed a
 * holiday.png converted to JPEG (downloaded as holiday.jpg) under png, and not under jpg.
 */
function extensionCondition(ext: string) {
  const likes = extensionsLike(ext).map((e) => sql`lower(dl.name) like ${`%.${escapeLike(e)}`} escape '\\'`);
  return sql<boolean>`exists (
    select 1 from (
      select case when v.name like '%.%' then v.name else library_items.name end as name
      from library_versions v where v.item_id = library_items.id and v.version = library_items.latest_version
    ) dl where ${sql.join(likes, sql` or `)})`;
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

export async function listItems(db: Kysely<Database>, viewer: Sharer, seesAll: boolean, q: ListQuery): Promise<ItemPage> {
  const page = Math.max(1, Math.floor(q.page ?? 1));
  const pageSize = Math.min(200, Math.max(1, Math.floor(q.pageSize ?? 50)));
  let base = db.selectFrom('library_items');
  const visible = await scopeCondition(db, viewer, seesAll, q.scope ?? 'all');
  if (visible) base = base.where(visible);
  // Narrows within what the viewer sees (a teammate's shared items, or anyone's for an admin).
  if (q.owner) base = base.where('owner_id', '=', q.owner);
  // SQLite has no default LIKE escape character, so it is named explicitly (PostgreSQL accepts it too).
  if (q.name) base = base.where(sql<boolean>`lower(name) like ${`%${escapeLike(q.name.toLowerCase())}%`} escape '\\'`);
  if (q.type) {
    const f = typeFilter(q.type);
    if (f.prefix) base = base.where(sql<boolean>`content_type like ${`${escapeLike(f.prefix)}%`} escape '\\'`);
    if (f.exact) base = base.where('content_type', '=', f.exact);
    if (f.ext) base = base.where(extensionCondition(f.ext));
  }
  const total = Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const items = await base
    .selectAll()
    .orderBy('updated_at', 'desc')
    .orderBy('id')
    .limit(pageSize)
    .offset((page - 1) * pageSize)
    .execute();
  return { items, total, page, pageSize };
}
