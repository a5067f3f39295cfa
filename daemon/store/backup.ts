/**
 * Backup and restore of an embedded deployment (SQLite + local data dir), safe while the daemon runs:
 * the database is copied with SQLite's online backup API (a consistent snapshot, WAL included), then
 * every library blob that snapshot refers to is copied beside it. Blobs are content-addressed and never
 * rewritten, so a blob's name is its digest: the copy is verified as it streams. The archive (a ZIP,
 * written to a temp name and renamed) carries a manifest with every file's size and SHA-256; restore
 * checks them all before it writes anything into the data dir. Job outputs are not kept (they expire).
 * PostgreSQL deployments back up with pg_dump plus the data dir's library/ (docs/OPERATIONS.md).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { KilnError } from '../../src/core/errors.js';
import { KEY_FILE } from '../auth/data-key.js';
import { VERSION } from '../../src/core/version.js';
import { MIGRATIONS } from './migrations.js';

export interface BackupFile {
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: 'kiln-backup';
  version: 1;
  kilnVersion: string;
  createdAt: string;
  /** Migrations applied to the database in the backup: a kiln that lacks one of them cannot open it. */
  migrations: string[];
  files: BackupFile[];
}

const DB_ENTRY = 'kiln.db';
const MANIFEST = 'manifest.json';

function blobPath(dataDir: string, hash: string): string {
  return path.join(dataDir, 'library', 'blobs', hash.slice(0, 2), hash);
}

/** Streams `src` into the archive while hashing it; the digest is known once the entry is read out. */
function addHashed(zip: yazl.ZipFile, src: string, name: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      size += chunk.length;
      cb(null, chunk);
    },
  });
  const done = new Promise<{ sha256: string; size: number }>((resolve, reject) => {
    tap.on('end', () => resolve({ sha256: hash.digest('hex'), size }));
    tap.on('error', reject);
  });
  const input = createReadStream(src);
  input.on('error', (e) => tap.destroy(e));
  input.pipe(tap);
  zip.addReadStream(tap, name, { compress: name === DB_ENTRY, mtime: new Date(0) });
  return done;
}

/** How many snapshots a backup takes at most when files are deleted while it copies their blobs. */
const ATTEMPTS = 3;

/** `blobRoot`: where `library/blobs` and the data key live (SHARED_DIR when set; the data dir otherwise). */
/**
 * `out` is a file (written beside itself, renamed when complete) or a stream such as stdout, written as
 * the archive is made: a big library goes through without a second copy on disk (`-o - | ssh …`).
 */
export async function backupDataDir(dataDir: string, out: string | NodeJS.WritableStream, blobRoot = dataDir): Promise<BackupManifest> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await backupOnce(dataDir, out, blobRoot);
    } catch (e) {
      // A blob the snapshot refers to was deleted meanwhile (its last version went): a new snapshot no
      // longer refers to it, so trying again gives a consistent backup. Not on a stream: what went out is out.
      if (!(e instanceof KilnError && e.reason === BLOB_GONE) || attempt >= ATTEMPTS || typeof out !== 'string') throw e;
    }
  }
}

const BLOB_GONE = 'blob-deleted-during-backup';

async function backupOnce(dataDir: string, out: string | NodeJS.WritableStream, blobRoot: string): Promise<BackupManifest> {
  const dbFile = path.join(dataDir, DB_ENTRY);
  if (!existsSync(dbFile))
    throw new KilnError(
      'NOT_FOUND',
      `No kiln database in ${dataDir} (is DATABASE_URL set? PostgreSQL is backed up with pg_dump: docs/OPERATIONS.md).`,
    );
  const outFile = typeof out === 'string' ? out : undefined;
  const work = await mkdtemp(path.join(outFile ? path.dirname(path.resolve(outFile)) : tmpdir(), '.kiln-backup-'));
  const partial = outFile ? `${outFile}.partial-${path.basename(work)}` : undefined;
  try {
    const { default: Sqlite } = await import('better-sqlite3');
    const snapshot = path.join(work, DB_ENTRY);
    const live = new Sqlite(dbFile, { readonly: true, fileMustExist: true });
    try {
      live.pragma('busy_timeout = 10000');
      await live.backup(snapshot);
    } finally {
      live.close();
    }
    const snap = new Sqlite(snapshot, { readonly: true });
    let blobs: { hash: string; size: number }[];
    let migrations: string[];
    try {
      const hasLibrary = snap.prepare("select 1 from sqlite_master where type = 'table' and name = 'library_blobs'").get();
      blobs = hasLibrary
        ? (snap
            // Only content stored and ready: a pending upload or a removal under way has no version
            // pointing at it (the restored daemon's sweep clears such rows).
            .prepare(
              `select hash, size from library_blobs ${hasColumn(snap, 'library_blobs', 'state') ? "where state = 'ready'" : ''} order by hash`,
            )
            .all() as { hash: string; size: number }[])
        : [];
      migrations = (snap.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((r) => r.name);
    } finally {
      snap.close();
    }

    const zip = new yazl.ZipFile();
    // 0600 whatever the umask: the archive holds the database and the data key.
    const written = partial
      ? pipeline(zip.outputStream, createWriteStream(partial, { mode: 0o600 }))
      : pipeline(zip.outputStream, out as NodeJS.WritableStream);
    // Awaited below on success; on a failure before that, its rejection must not go unhandled.
    written.catch(() => undefined);
    const files: BackupFile[] = [];
    const db = await addHashed(zip, snapshot, DB_ENTRY);
    files.push({ path: DB_ENTRY, ...db });
    // The data key (when it lives in the data dir rather than SECRET_KEY): without it the restored
    // database's encrypted secrets could not be read, and the daemon would refuse to start on it.
    const keyFile = path.join(blobRoot, KEY_FILE);
    if (existsSync(keyFile)) files.push({ path: KEY_FILE, ...(await addHashed(zip, keyFile, KEY_FILE)) });
    for (const b of blobs) {
      const src = blobPath(blobRoot, b.hash);
      const rel = `library/blobs/${b.hash.slice(0, 2)}/${b.hash}`;
      // Deleted after the snapshot was taken (its last version went): the snapshot still needs it.
      const gone = () =>
        new KilnError(
          'CONFLICT',
          `Library blob ${b.hash} went away during the backup (files were deleted meanwhile, ${ATTEMPTS} times in a row); run the backup again.`,
          { reason: BLOB_GONE },
        );
      if (!(await stat(src).catch(() => undefined))) throw gone();
      const got = await addHashed(zip, src, rel).catch((e: NodeJS.ErrnoException) => {
        throw e.code === 'ENOENT' ? gone() : e;
      });
      if (got.sha256 !== b.hash)
        throw new KilnError('INTERNAL', `Library blob ${b.hash} is damaged on disk (its content hashes to ${got.sha256}).`);
      files.push({ path: rel, ...got });
    }
    const manifest: BackupManifest = {
      format: 'kiln-backup',
      version: 1,
      kilnVersion: VERSION,
      createdAt: new Date().toISOString(),
      migrations,
      files,
    };
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2) + '\n'), MANIFEST, { mtime: new Date(0) });
    zip.end();
    await written;
    if (partial && outFile) await rename(partial, outFile);
    return manifest;
  } catch (e) {
    if (partial) await rm(partial, { force: true });
    throw e;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function hasColumn(db: { prepare(sql: string): { all(): unknown[] } }, table: string, column: string): boolean {
  return (db.prepare(`pragma table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column);
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (err, z) => (err || !z ? reject(err ?? new Error('no zip')) : resolve(z))),
  );
}

/** Reads an entry to its end unused. Waits on errors too: a damaged entry must fail, never hang or go unhandled. */
function skip(stream: NodeJS.ReadableStream): Promise<void> {
  return finished(stream.resume());
}

/**
 * Calls `each` for every entry in turn with its read stream. What the archive's own damage raises
 * (a bad CRC, deflate data that does not inflate, a size that does not match) is the backup's fault,
 * not kiln's: UNSUPPORTED_INPUT naming the file and the entry.
 */
async function forEachEntry(file: string, each: (entry: yauzl.Entry, stream: NodeJS.ReadableStream) => Promise<void>): Promise<void> {
  const z = await openZip(file).catch((e: Error) => {
    throw new KilnError('UNSUPPORTED_INPUT', `${path.basename(file)} is not a kiln backup: ${e.message}`);
  });
  let current = '';
  try {
    await new Promise<void>((resolve, reject) => {
      z.on('error', reject);
      z.on('end', () => resolve());
      z.on('entry', (entry: yauzl.Entry) => {
        current = entry.fileName;
        z.openReadStream(entry, (err, stream) => {
          if (err || !stream) return reject(err ?? new Error('no data'));
          each(entry, stream).then(() => z.readEntry(), reject);
        });
      });
      z.readEntry();
    });
  } catch (e) {
    if (e instanceof KilnError) throw e;
    throw new KilnError(
      'UNSUPPORTED_INPUT',
      `${path.basename(file)} is damaged${current ? ` (entry ${current})` : ''}: ${(e as Error).message}`,
      { reason: 'backup-damaged' },
    );
  } finally {
    z.close();
  }
}

export async function readManifest(file: string): Promise<BackupManifest> {
  let manifest: BackupManifest | undefined;
  await forEachEntry(file, async (entry, stream) => {
    if (entry.fileName !== MANIFEST) return skip(stream);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    try {
      manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest;
    } catch {
      manifest = undefined; // Refused below like any other manifest that is not one.
    }
  });
  // A later archive format is a newer kiln's backup, not a foreign file: say which to restore it with.
  if (manifest?.format === 'kiln-backup' && typeof manifest.version === 'number' && manifest.version > 1)
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `The backup was made by a newer kiln (${manifest.kilnVersion}, backup format ${manifest.version}): restore it with that version.`,
      { reason: 'backup-newer-than-kiln' },
    );
  const validFile = (f: unknown) =>
    !!f &&
    typeof (f as BackupFile).path === 'string' &&
    Number.isSafeInteger((f as BackupFile).size) &&
    typeof (f as BackupFile).sha256 === 'string';
  if (
    manifest?.format !== 'kiln-backup' ||
    manifest.version !== 1 ||
    !Array.isArray(manifest.files) ||
    !manifest.files.every(validFile) ||
    !Array.isArray(manifest.migrations) ||
    !manifest.migrations.every((m) => typeof m === 'string')
  )
    throw new KilnError('UNSUPPORTED_INPUT', `${path.basename(file)} is not a kiln backup (no valid manifest.json).`);
  return manifest;
}

/**
 * Restores a backup into `dataDir`, which must hold no database (a new or emptied data dir; stop the
 * daemon first). Every file is checked against the manifest in a staging directory before anything is
 * moved into place.
 */
export async function restoreBackup(file: string, dataDir: string): Promise<BackupManifest> {
  const manifest = await readManifest(file);
  const unknown = manifest.migrations.filter((m) => !MIGRATIONS.some((x) => x.name === m));
  if (unknown.length)
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `The backup was made by a newer kiln (${manifest.kilnVersion}, migrations ${unknown.join(', ')}): restore it with that version.`,
      {
        reason: 'backup-newer-than-kiln',
      },
    );
  if (existsSync(path.join(dataDir, DB_ENTRY)) || existsSync(path.join(dataDir, 'library')))
    throw new KilnError(
      'CONFLICT',
      `${dataDir} already holds a kiln database or library: restore into an empty data dir (stop the daemon, move the old one aside).`,
    );
  await mkdir(dataDir, { recursive: true });
  const staging = await mkdtemp(path.join(dataDir, '.restore-'));
  try {
    const expected = new Map(manifest.files.map((f) => [f.path, f]));
    const seen = new Set<string>();
    await forEachEntry(file, async (entry, stream) => {
      const name = entry.fileName;
      if (name === MANIFEST) return skip(stream);
      const want = expected.get(name);
      if (!want || name.includes('..') || path.isAbsolute(name))
        throw new KilnError('UNSUPPORTED_INPUT', `The backup holds an unexpected entry ${name}.`);
      const dest = path.join(staging, name);
      await mkdir(path.dirname(dest), { recursive: true });
      const hash = createHash('sha256');
      let size = 0;
      const tap = new PassThrough();
      tap.on('data', (c: Buffer) => {
        hash.update(c);
        size += c.length;
      });
      await pipeline(stream, tap, createWriteStream(dest, { mode: 0o600 }));
      const sha256 = hash.digest('hex');
      if (sha256 !== want.sha256 || size !== want.size)
        throw new KilnError(
          'UNSUPPORTED_INPUT',
          `${name} in the backup is damaged (expected ${want.size} bytes, sha256 ${want.sha256}; got ${size}, ${sha256}).`,
          {
            reason: 'backup-digest-mismatch',
          },
        );
      seen.add(name);
    });
    const missing = manifest.files.filter((f) => !seen.has(f.path));
    if (missing.length)
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `The backup lacks ${missing.length} file(s) its manifest lists (first: ${missing[0]!.path}).`,
      );
    // Everything checked: move into place (same file system, so each move is a rename).
    for (const top of await readdir(staging)) await rename(path.join(staging, top), path.join(dataDir, top));
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
