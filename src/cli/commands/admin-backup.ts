/**
 * `kiln admin backup|restore|migrate`: always on a data dir (the database and library on this machine),
 * never through a server. Backup is safe while the daemon runs; restore wants an empty data dir.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { defaultDataDir } from '../../core/paths.js';
import { writeFailure } from '../output-write.js';

type Opts = Record<string, string | boolean | undefined>;

function dataDirOf(o: Opts): string {
  return path.resolve((o.dataDir as string | undefined) ?? process.env.DATA_DIR ?? defaultDataDir());
}

function say(o: Opts, json: Record<string, unknown>, text: string, to: NodeJS.WriteStream = process.stdout): void {
  to.write(o.json ? JSON.stringify(json) + '\n' : text);
}

/**
 * Checked before the snapshot: a missing directory used to fail as INTERNAL (mkdtemp's ENOENT), and an
 * existing directory as -o only once the whole archive had been written (EISDIR on the final rename).
 */
async function checkOutput(out: string): Promise<void> {
  const fail = (code: string) => writeFailure(Object.assign(new Error(code), { code }), out);
  if ((await stat(out).catch(() => undefined))?.isDirectory()) throw fail('EISDIR');
  const parent = await stat(path.dirname(out)).catch((e: unknown) => {
    throw writeFailure(e, out);
  });
  if (!parent.isDirectory()) throw fail('ENOTDIR');
  await access(path.dirname(out), constants.W_OK).catch((e: unknown) => {
    throw writeFailure(e, out);
  });
}

export async function backupCommand(o: Opts): Promise<void> {
  if (process.env.DATABASE_URL)
    throw new KilnError(
      'USAGE_ERROR',
      "DATABASE_URL is set: back up PostgreSQL with pg_dump and the data dir's library/ (docs/OPERATIONS.md).",
    );
  if (process.env.S3_BUCKET)
    throw new KilnError(
      'USAGE_ERROR',
      "S3_BUCKET is set: the library's content is in the bucket; back up the database and the bucket as docs/OPERATIONS.md says.",
    );
  const { backupDataDir } = await import('../../../daemon/store/backup.js');
  // `-o -` streams the archive to stdout (it used to write a file named "-" in the current directory and
  // print the summary where the archive was expected); the summary then goes to stderr.
  const toStdout = o.output === '-';
  if (toStdout && process.stdout.isTTY)
    throw new KilnError(
      'USAGE_ERROR',
      'Not writing a backup archive to a terminal: redirect stdout (-o - > file, or a pipe) or name a file.',
    );
  const out = toStdout ? '-' : path.resolve(o.output as string);
  if (!toStdout) await checkOutput(out);
  const started = Date.now();
  const dataDir = dataDirOf(o);
  const m = await backupDataDir(
    dataDir,
    toStdout ? process.stdout : out,
    process.env.SHARED_DIR ? path.resolve(process.env.SHARED_DIR) : dataDir,
  );
  const bytes = m.files.reduce((a, f) => a + f.size, 0);
  const blobs = m.files.filter((f) => f.path.startsWith('library/')).length;
  // Besides the database and the blobs, only the data key (when it lives in the data dir).
  const key = m.files.length > blobs + 1 ? ', the data key' : '';
  say(
    o,
    { ok: true, file: out, files: m.files.length, bytes, migrations: m.migrations.length, ms: Date.now() - started },
    `Backup written to ${toStdout ? 'stdout' : out}: the database${key} and ${blobs} library file(s), ${(bytes / 1048576).toFixed(1)} MB, every digest in manifest.json${toStdout ? '' : '; readable only by you'}.\n`,
    toStdout ? process.stderr : process.stdout,
  );
}

export async function restoreCommand(file: string, o: Opts): Promise<void> {
  // The daemon would keep using PostgreSQL and never see the restored SQLite database.
  if (process.env.DATABASE_URL)
    throw new KilnError(
      'USAGE_ERROR',
      'DATABASE_URL is set: restore PostgreSQL with pg_restore and put the library/ back (docs/OPERATIONS.md); unset it to restore a SQLite backup.',
    );
  const { restoreBackup } = await import('../../../daemon/store/backup.js');
  const dir = dataDirOf(o);
  const m = await restoreBackup(path.resolve(file), dir);
  // Opening the store runs the migrations a backup from an older kiln needs.
  const { openStore, appliedMigrations } = await import('../../../daemon/store/db.js');
  const store = await openStore({ dataDir: dir });
  const applied = await appliedMigrations(store);
  await store.close();
  say(
    o,
    {
      ok: true,
      dataDir: dir,
      files: m.files.length,
      backupCreatedAt: m.createdAt,
      backupKilnVersion: m.kilnVersion,
      migrations: applied.length,
    },
    `Restored ${m.files.length} file(s) from the backup of ${m.createdAt} (kiln ${m.kilnVersion}) into ${dir}; every digest checked. Start the daemon on it.\n`,
  );
}

export async function migrateCommand(o: Opts): Promise<void> {
  const { openStore, pendingMigrations, refuseNewerSchema } = await import('../../../daemon/store/db.js');
  const dataDir = dataDirOf(o);
  const target = { dataDir, databaseUrl: process.env.DATABASE_URL || undefined };
  const probe = await openStore({ ...target, migrate: false });
  let pending: string[];
  try {
    // A database a newer kiln migrated is not "up to date": say so, as the daemon would.
    await refuseNewerSchema(probe);
    pending = await pendingMigrations(probe);
  } finally {
    await probe.close();
  }
  if (o.dryRun) {
    say(
      o,
      { pending },
      pending.length ? `Pending migrations:\n${pending.map((p) => `  ${p}`).join('\n')}\n` : 'The database is up to date.\n',
    );
    return;
  }
  const store = await openStore(target);
  await store.close();
  say(o, { applied: pending }, pending.length ? `Applied: ${pending.join(', ')}\n` : 'The database is up to date.\n');
}
