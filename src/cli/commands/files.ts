/**
 * `kiln files list|upload|get|versions|add-version|restore|update|rm`: the file library of a kiln server (remote mode, through the
 * CLI's API client), or of a local data dir when no server is configured or --local is given (the
 * store is opened directly; the local user is the data dir's first admin, who sees every item).
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { formatBytes } from '../../core/byte-size.js';
import { KilnError } from '../../core/errors.js';
import { defaultDataDir, versionFileName } from '../../core/paths.js';
import { parseOutputOption, plainName, resolveOutputPath, writePolicy } from '../output-naming.js';
import { writeOutput } from '../output-write.js';
import { resolveServer } from '../profiles.js';
import { connect, type RemoteClient } from '../remote/client.js';
import { regularFile } from '../../core/regular-file.js';

type Opts = Record<string, string | boolean | undefined>;

interface ItemView {
  id: string;
  name: string;
  ownerId: string;
  contentType: string;
  size: number;
  latestVersion: number;
  createdAt: string;
  updatedAt: string;
}

interface VersionView {
  version: number;
  name: string;
  size: number;
  contentType: string;
  sha256: string;
  createdBy: string;
  createdAt: string;
  source: string;
  tool: string | null;
  settings: unknown;
  restoredFrom: number | null;
}

/** One interface over both modes, so each command is written once. */
interface Backend {
  list(q: {
    page: number;
    pageSize: number;
    type?: string;
    name?: string;
    scope?: string;
  }): Promise<{ items: ItemView[]; total: number; page: number; pageSize: number }>;
  upload(file: string, name?: string, scope?: string): Promise<ItemView>;
  versions(id: string): Promise<VersionView[]>;
  /** Writes the version's bytes to `dest` ('-' = stdout); returns the version's file name first via `nameOf`. */
  fetchName(id: string, version?: number): Promise<string>;
  download(id: string, version: number | undefined, dest: string): Promise<void>;
  remove(id: string, version?: number): Promise<void>;
  /** Uploads `file` as the item's newest version (named `name`, else after the file). */
  addVersion(id: string, file: string, name?: string): Promise<ItemView & { version: VersionView }>;
  /** Makes a copy of version `version` the item's newest. */
  restore(id: string, version: number): Promise<ItemView & { version: VersionView }>;
  /** Renames the item and/or shares it with the team or makes it private. */
  update(id: string, patch: { name?: string; scope?: string }): Promise<ItemView>;
  close(): Promise<void>;
}

function remoteBackend(c: RemoteClient): Backend {
  const enc = encodeURIComponent;
  return {
    async list(q) {
      const qs = new URLSearchParams({
        page: String(q.page),
        pageSize: String(q.pageSize),
        ...(q.type ? { type: q.type } : {}),
        ...(q.name ? { name: q.name } : {}),
        ...(q.scope ? { scope: q.scope } : {}),
      });
      return c.json('GET', `/api/v1/files?${qs}`);
    },
    async upload(file, name, scope) {
      const r = await c.postForm('/api/v1/files', [
        { field: 'file', path: file, filename: path.basename(file) },
        ...(name ? [{ field: 'name', value: name }] : []),
        ...(scope ? [{ field: 'scope', value: scope }] : []),
      ]);
      return r.body as unknown as ItemView;
    },
    async versions(id) {
      return (await c.json<{ versions: VersionView[] }>('GET', `/api/v1/files/${enc(id)}/versions`)).versions;
    },
    async fetchName(id, version) {
      const item = await c.json<ItemView & { versions: VersionView[] }>('GET', `/api/v1/files/${enc(id)}`);
      const v = version === undefined ? item.versions[0] : item.versions.find((x) => x.version === version);
      if (!v) throw new KilnError('NOT_FOUND', `Library item ${id} has no version ${version}.`);
      return versionFileName(item.name, v.name);
    },
    async download(id, version, dest) {
      await writeOut(await c.download(`/api/v1/files/${enc(id)}/download${version ? `?version=${version}` : ''}`), dest);
    },
    async remove(id, version) {
      await c.json('DELETE', version ? `/api/v1/files/${enc(id)}/versions/${version}` : `/api/v1/files/${enc(id)}`);
    },
    async addVersion(id, file, name) {
      const r = await c.postForm(`/api/v1/files/${enc(id)}/versions`, [
        { field: 'file', path: file, filename: path.basename(file) },
        ...(name ? [{ field: 'name', value: name }] : []),
      ]);
      return r.body as unknown as ItemView & { version: VersionView };
    },
    async restore(id, version) {
      return c.json('POST', `/api/v1/files/${enc(id)}/versions/${version}/restore`);
    },
    async update(id, patch) {
      return c.json('PATCH', `/api/v1/files/${enc(id)}`, patch);
    },
    async close() {},
  };
}

async function localBackend(dataDir: string): Promise<Backend> {
  const { openStore } = await import('../../../daemon/store/db.js');
  const { firstAdmin, LOCAL_OWNER } = await import('../../../daemon/store/users.js');
  const { LibraryService } = await import('../../../daemon/library/service.js');
  const { itemView, versionView } = await import('../../../daemon/library/views.js');
  const { quotaBytesFromEnv } = await import('../../../daemon/library/quota.js');
  const store = await openStore({ dataDir });
  const lib = new LibraryService(store.db, dataDir, quotaBytesFromEnv());
  // Items uploaded here belong to the data dir's admin (or a local owner before any daemon ran).
  const admin = await firstAdmin(store.db);
  const me = { id: admin?.id ?? LOCAL_OWNER, role: 'admin' as const };
  /** A copy the library takes over (it moves what it is given); the user's file stays where it is. */
  const libraryCopy = async (file: string) => {
    const tmp = path.join(await lib.blobs.tmpDir(), `cli-${process.pid}-${Date.now()}`);
    await copyFile(file, tmp);
    return tmp;
  };
  return {
    async list(q) {
      const { parseScopeFilter } = await import('../../../daemon/library/sharing.js');
      const r = await lib.list(me, { ...q, scope: parseScopeFilter(q.scope) });
      return { ...r, items: r.items.map((i) => itemView(i) as unknown as ItemView) };
    },
    async upload(file, name, scope) {
      return itemView(
        await lib.create(me, { path: await libraryCopy(file), name: path.basename(file) }, { name, scope }),
      ) as unknown as ItemView;
    },
    async addVersion(id, file, name) {
      const r = await lib.addVersion(
        me,
        id,
        { path: await libraryCopy(file), name: name?.trim() || path.basename(file) },
        { source: 'upload' },
      );
      return { ...itemView(r.item), version: versionView(r.version) } as unknown as ItemView & { version: VersionView };
    },
    async restore(id, version) {
      const r = await lib.restore(me, id, version);
      return { ...itemView(r.item), version: versionView(r.version) } as unknown as ItemView & { version: VersionView };
    },
    async update(id, patch) {
      return itemView(await lib.update(me, id, patch)) as unknown as ItemView;
    },
    async versions(id) {
      return (await lib.versions(await lib.item(me, id))).map((v) => versionView(v) as unknown as VersionView);
    },
    async fetchName(id, version) {
      const item = await lib.item(me, id);
      return versionFileName(item.name, (await lib.version(item, version)).name);
    },
    async download(id, version, dest) {
      const v = await lib.version(await lib.item(me, id), version);
      await writeOut(await lib.blobs.open(v.blob_hash), dest);
    },
    async remove(id, version) {
      if (version) await lib.deleteVersion(me, id, version);
      else await lib.deleteItem(me, id);
    },
    close: () => store.close(),
  };
}

/** Written beside the target and renamed (src/cli/output-write.ts): an interrupted download leaves no half file. */
const writeOut = (src: Readable, dest: string) => writeOutput(src, dest);

async function backend(o: Opts): Promise<Backend> {
  const server = o.local ? undefined : resolveServer({ server: o.server as string | undefined, profile: o.profile as string | undefined });
  if (server) return remoteBackend(await connect(server));
  return localBackend(path.resolve((o.dataDir as string | undefined) ?? defaultDataDir()));
}

async function withBackend<T>(o: Opts, fn: (b: Backend) => Promise<T>): Promise<T> {
  const b = await backend(o);
  try {
    return await fn(b);
  } finally {
    await b.close();
  }
}

function posInt(raw: string | boolean | undefined, flag: string, def?: number): number | undefined {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new KilnError('USAGE_ERROR', `${flag} takes a whole number >= 1 (got "${raw}").`);
  return n;
}

const NAME_COLUMNS = 40;

/** Terminal columns of a name: East Asian wide characters and emoji take two, combining marks none. */
function columns(text: string): number {
  let n = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x300 && c <= 0x36f) || (c >= 0xfe00 && c <= 0xfe0f) || c === 0x200d) continue;
    const wide =
      (c >= 0x1100 && c <= 0x115f) ||
      (c >= 0x2e80 && c <= 0xa4cf) ||
      (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) ||
      (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) ||
      (c >= 0x1f300 && c <= 0x1faff) ||
      (c >= 0x20000 && c <= 0x3fffd);
    n += wide ? 2 : 1;
  }
  return n;
}

export async function filesList(o: Opts): Promise<void> {
  await withBackend(o, async (b) => {
    const r = await b.list({
      page: posInt(o.page, '--page', 1)!,
      pageSize: posInt(o.pageSize, '--page-size', 50)!,
      type: o.type as string | undefined,
      name: o.name as string | undefined,
      scope: o.scope as string | undefined,
    });
    if (o.json) {
      process.stdout.write(JSON.stringify(r) + '\n');
      return;
    }
    if (!r.items.length) {
      process.stderr.write('No files.\n');
      return;
    }
    // Padded by terminal columns, to at most NAME_COLUMNS: one 200-byte name padded every line to its
    // width, and CJK names (two columns a character) pushed their line's later columns out of line.
    const w = Math.min(Math.max(...r.items.map((i) => columns(i.name)), 4), NAME_COLUMNS);
    for (const i of r.items)
      process.stdout.write(
        `${i.id}  ${i.name}${' '.repeat(Math.max(0, w - columns(i.name)))}  v${String(i.latestVersion).padEnd(3)}  ${formatBytes(i.size).padStart(9)}  ${i.contentType}  ${i.updatedAt}\n`,
      );
    if (r.total > r.page * r.pageSize)
      process.stderr.write(`${r.total} files; page ${r.page} of ${Math.ceil(r.total / r.pageSize)} (--page N)\n`);
  });
}

export async function filesUpload(files: string[], o: Opts): Promise<void> {
  if (o.name && files.length > 1) throw new KilnError('USAGE_ERROR', '--name takes a single file.');
  // Checked before any upload, as a tool run checks its inputs: a directory was streamed as a body
  // that failed mid-request ("Cannot reach the kiln server") or copied into the data dir (EISDIR).
  for (const f of files) await regularFile(f);
  await withBackend(o, async (b) => {
    for (const f of files) {
      const item = await b.upload(f, o.name as string | undefined, o.scope as string | undefined);
      if (o.json) process.stdout.write(JSON.stringify(item) + '\n');
      else process.stdout.write(`${item.id}  ${item.name}\n`);
    }
  });
}

export async function filesVersions(id: string, o: Opts): Promise<void> {
  await withBackend(o, async (b) => {
    const vs = await b.versions(id);
    if (o.json) {
      process.stdout.write(JSON.stringify(vs) + '\n');
      return;
    }
    for (const v of vs) {
      const how =
        v.source === 'tool'
          ? `tool ${v.tool} ${JSON.stringify(v.settings)}`
          : v.source === 'restore'
            ? `restored from v${v.restoredFrom}`
            : 'upload';
      process.stdout.write(
        `v${String(v.version).padEnd(3)}  ${v.name}  ${formatBytes(v.size).padStart(9)}  ${v.contentType}  ${v.createdAt}  ${how}\n`,
      );
    }
  });
}

export async function filesGet(id: string, o: Opts): Promise<void> {
  const version = posInt(o.ver, '--ver');
  const policy = writePolicy(o);
  // Before any request: -o - with --json put the JSON line right after the file's bytes on stdout.
  const target = parseOutputOption(o.output as string | undefined, 1, { json: !!o.json });
  await withBackend(o, async (b) => {
    // The item's own name (a server's name is used as a base name only).
    const name = plainName(await b.fetchName(id, version), 'download');
    const dest = target.kind === 'stdout' ? '-' : resolveOutputPath(target, name, undefined, [], policy);
    await b.download(id, version, dest);
    if (o.json) process.stdout.write(JSON.stringify({ id, version: version ?? null, ok: true, output: dest }) + '\n');
    else if (dest !== '-') process.stderr.write(`${path.relative(process.cwd(), dest) || dest}\n`);
  });
}

export async function filesRm(ids: string[], o: Opts): Promise<void> {
  const version = posInt(o.ver, '--ver');
  if (version && ids.length > 1) throw new KilnError('USAGE_ERROR', '--ver takes a single item.');
  await withBackend(o, async (b) => {
    for (const id of ids) {
      await b.remove(id, version);
      if (o.json) process.stdout.write(JSON.stringify({ id, version: version ?? null, deleted: true }) + '\n');
      else process.stderr.write(`deleted ${id}${version ? ` version ${version}` : ''}\n`);
    }
  });
}

/** One line for an item after a change: its id, name, newest version and scope. */
function changed(item: ItemView & { scope?: string }, o: Opts, what: string): void {
  if (o.json) process.stdout.write(JSON.stringify(item) + '\n');
  else process.stderr.write(`${what} ${item.id}  ${item.name}  v${item.latestVersion}${item.scope ? `  ${item.scope}` : ''}\n`);
}

export async function filesAddVersion(id: string, file: string, o: Opts): Promise<void> {
  await regularFile(file);
  await withBackend(o, async (b) => changed(await b.addVersion(id, file, o.name as string | undefined), o, 'added a version to'));
}

export async function filesRestore(id: string, o: Opts): Promise<void> {
  const version = posInt(o.ver, '--ver');
  if (version === undefined) throw new KilnError('USAGE_ERROR', 'Say which version to restore: kiln files restore ID --ver N.');
  await withBackend(o, async (b) => changed(await b.restore(id, version), o, `restored v${version} of`));
}

export async function filesUpdate(id: string, o: Opts): Promise<void> {
  const name = o.name as string | undefined;
  const scope = o.scope as string | undefined;
  if (name === undefined && scope === undefined) throw new KilnError('USAGE_ERROR', 'Give --name NEW-NAME and/or --scope private|team.');
  await withBackend(o, async (b) =>
    changed(await b.update(id, { ...(name !== undefined ? { name } : {}), ...(scope ? { scope } : {}) }), o, 'updated'),
  );
}
