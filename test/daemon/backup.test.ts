/**
 * `kiln admin backup` while the daemon works, and `kiln admin restore` into a new data dir: users sign
 * in, every library version downloads byte-identical; a damaged backup or a non-empty target is refused
 * with nothing written; a database from a newer kiln is refused at start.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { MIGRATIONS, migrationProvider } from '../../daemon/store/migrations.js';
import { ERROR_TABLE } from '../../src/core/errors.js';
import { kiln } from '../helpers/cli.js';
import { daemonEnv } from '../helpers/daemon-process.js';
import { makeImage, makePhoto, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, login, startServer, type TestServer } from '../helpers/server.js';
import { readZip } from '../helpers/zip.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const STRONG = 'Correct-Horse-42';

describe('backup and restore', () => {
  let s: TestServer;
  const dir = tempDir('kiln-backup-');
  const originals = new Map<string, string>(); // `${itemId}/${version}` → sha256
  const uploaded = new Map<string, string>(); // sha256 → what it was, for everything uploaded during the backup
  let userToken: string;
  const backup = path.join(dir, 'kiln-backup.zip');

  before(async () => {
    s = await startServer();
    await api(s, s.token, 'POST', '/api/auth/register', { username: 'bea', password: STRONG, role: 'user' });
    userToken = await login(s.url, 'bea', STRONG);
  });
  after(() => s.close());

  it('backs up while jobs and uploads run', async () => {
    for (let i = 0; i < 3; i++) {
      const f = await makeImage(dir, `lib${i}.png`, 40 + i * 10, 30);
      const item = await api(s, userToken, 'POST', '/api/v1/files', await form({ file: await filePart(f) }));
      assert.equal(item.status, 201, item.text);
      originals.set(`${item.body.id}/1`, sha(await readFile(f)));
      if (i === 0) {
        const v2 = await makeImage(dir, 'lib0-v2.png', 80, 80);
        const r = await api(s, userToken, 'POST', `/api/v1/files/${item.body.id}/versions`, await form({ file: await filePart(v2) }));
        assert.ok(r.status === 200 || r.status === 201, r.text);
        originals.set(`${item.body.id}/2`, sha(await readFile(v2)));
      }
    }
    // Work going on for as long as the backup runs: tool runs, uploads of new content, new versions
    // and deletions (a blob the snapshot needs may go away: the backup then takes a new snapshot).
    const photo = await readFile(await makePhoto(dir, 'busy.jpg', 400, 300));
    let backingUp = true;
    let backupStarted = 0;
    let uploadsDuringBackup = 0;
    const jobs = (async () => {
      const fd = async () => form({ file: await filePart(path.join(dir, 'busy.jpg')), settings: '{"width": 100}' });
      while (backingUp) assert.equal((await api(s, s.token, 'POST', '/api/v1/tools/image/resize', await fd())).status, 200);
    })();
    const uploads = (async () => {
      for (let i = 0; backingUp; i++) {
        // Bytes after a JPEG's end marker are ignored by decoders: each upload is a new blob.
        const bytes = Buffer.concat([photo, Buffer.from(`busy ${i}`)]);
        const up = await api(s, userToken, 'POST', '/api/v1/files', await form({ file: new File([bytes], `busy-${i}.jpg`) }));
        assert.equal(up.status, 201, up.text);
        uploaded.set(sha(bytes), `busy-${i}.jpg`);
        const v2 = Buffer.concat([photo, Buffer.from(`busy ${i} v2`)]);
        const r = await api(s, userToken, 'POST', `/api/v1/files/${up.body.id}/versions`, await form({ file: new File([v2], 'v2.jpg') }));
        assert.ok(r.status === 200 || r.status === 201, r.text);
        uploaded.set(sha(v2), `busy-${i}.jpg v2`);
        if (i % 2) assert.equal((await api(s, userToken, 'DELETE', `/api/v1/files/${up.body.id}`)).status, 200);
        if (backupStarted && backingUp) uploadsDuringBackup++;
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    backupStarted = Date.now();
    const r = await kiln(['admin', 'backup', '-o', backup, '--data-dir', s.dataDir, '--json']);
    backingUp = false;
    await Promise.all([jobs, uploads]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(uploadsDuringBackup > 0, 'uploads ran while the backup did');
    // It holds the database and the data key: private whatever the umask of whoever ran it.
    assert.equal(statSync(backup).mode & 0o777, 0o600);
    const out = JSON.parse(r.stdout);
    assert.equal(out.ok, true);
    assert.ok(out.files >= 4, `database + at least 3 blobs (${out.files})`);
    assert.ok(!readdirSync(dir).some((n) => n.includes('.partial') || n.startsWith('.kiln-backup-')), 'no temp files left');
  });

  it('restores into a new data dir: users sign in, every version downloads byte-identical', async () => {
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
    const r = await kiln(['admin', 'restore', backup, '--data-dir', target, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const restored = await startServer({ dataDir: target, generatePassword: true });
    try {
      const token = await login(restored.url, 'bea', STRONG);
      await login(restored.url, 'admin', s.adminPassword);
      const download = async (id: string, version: number) => {
        const res = await fetch(`${restored.url}/api/v1/files/${id}/versions/${version}/download`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 200, `${id}/${version}`);
        return sha(Buffer.from(await res.arrayBuffer()));
      };
      for (const [key, digest] of originals) {
        const [id, version] = key.split('/');
        assert.equal(await download(id!, Number(version)), digest, key);
      }
      // Every version the restored library holds (those uploaded during the backup included) downloads
      // byte-identical to what was uploaded.
      const list = await api(restored, token, 'GET', '/api/v1/files?pageSize=200');
      assert.equal(list.status, 200, list.text);
      assert.ok(list.body.total > 3 && list.body.total <= 200, `items: ${list.body.total}`);
      for (const item of list.body.items as { id: string }[]) {
        const { body } = await api(restored, token, 'GET', `/api/v1/files/${item.id}/versions`);
        for (const v of body.versions as { version: number; sha256: string }[]) {
          const got = await download(item.id, v.version);
          assert.equal(got, v.sha256, `${item.id}/${v.version} matches its record`);
          assert.ok(originals.has(`${item.id}/${v.version}`) || uploaded.has(got), `${item.id}/${v.version} is what was uploaded`);
        }
      }
    } finally {
      await restored.close();
    }
    // With DATABASE_URL set the daemon would not use a restored SQLite database: refused, nothing written.
    const elsewhere = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
    const pg = await kiln(['admin', 'restore', backup, '--data-dir', elsewhere], { env: { DATABASE_URL: 'postgres://127.0.0.1/kiln' } });
    assert.equal(pg.code, 2, pg.stderr);
    assert.match(pg.stderr, /pg_restore/);
    assert.deepEqual(readdirSync(elsewhere), []);
    // A second restore into the same (now used) data dir is refused.
    const again = await kiln(['admin', 'restore', backup, '--data-dir', target]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already holds/);
  });

  it('-o - streams the archive to stdout (summary on stderr) and it restores; no file named "-" is left', async () => {
    const cwd = mkdtempSync(path.join(dir, 'cwd-'));
    const r = await kiln(['admin', 'backup', '-o', '-', '--data-dir', s.dataDir, '--json'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(cwd), [], 'no file named "-" (nor temp files) in the current directory');
    const summary = JSON.parse(r.stderr.trim().split('\n').pop()!) as { ok: boolean; files: number };
    assert.equal(summary.ok, true);
    const streamed = path.join(cwd, 'streamed.zip');
    await writeFile(streamed, r.stdoutBuffer);
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
    const restored = await kiln(['admin', 'restore', streamed, '--data-dir', target, '--json']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(JSON.parse(restored.stdout).files, summary.files, 'every file of the manifest restored, digests checked');
    assert.ok(summary.files > 2, `the database and library blobs: ${summary.files}`);
  });

  it('refuses the data dir of a running daemon and leaves it as it was', async () => {
    const before = readdirSync(s.dataDir).sort();
    const items = (await api(s, userToken, 'GET', '/api/v1/files')).body.total;
    const r = await kiln(['admin', 'restore', backup, '--data-dir', s.dataDir, '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(JSON.parse(r.stdout).error.code, 'CONFLICT');
    assert.match(r.stderr, /already holds a kiln database/);
    assert.deepEqual(readdirSync(s.dataDir).sort(), before, 'nothing added (no staging dir left)');
    const after = await api(s, userToken, 'GET', '/api/v1/files');
    assert.equal(after.status, 200);
    assert.equal(after.body.total, items, 'the running daemon serves the same library');
  });

  it('checks every file against the manifest: a wrong digest is refused and nothing written', async () => {
    // The archive itself is intact (its CRCs match); only the manifest's digest of one blob is wrong.
    const entries = await readZip(backup);
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    const blob = manifest.files.find((f: { path: string }) => f.path.startsWith('library/'));
    blob.sha256 = sha(Buffer.from('something else'));
    const zip = new yazl.ZipFile();
    for (const [name, data] of entries) zip.addBuffer(name === 'manifest.json' ? Buffer.from(JSON.stringify(manifest)) : data, name);
    zip.end();
    const forged = path.join(dir, 'forged.zip');
    await pipeline(zip.outputStream, createWriteStream(forged));
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
    const r = await kiln(['admin', 'restore', forged, '--data-dir', target, '--json']);
    assert.notEqual(r.code, 0);
    const err = JSON.parse(r.stdout).error;
    assert.equal(err.reason, 'backup-digest-mismatch', r.stdout);
    assert.ok(err.message.includes(blob.path), err.message);
    assert.deepEqual(readdirSync(target), [], 'nothing written');
  });

  it('refuses a damaged backup and writes nothing', async () => {
    const bytes = Buffer.from(await readFile(backup));
    // Flip a byte inside a stored blob (blobs are stored uncompressed, so the digest check must catch it).
    const at = bytes.indexOf(Buffer.from('IDAT'));
    assert.ok(at > 0);
    bytes[at + 20] = bytes[at + 20]! ^ 0xff;
    const damaged = path.join(dir, 'damaged.zip');
    await writeFile(damaged, bytes);
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
    const r = await kiln(['admin', 'restore', damaged, '--data-dir', target]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /damaged|invalid|CRC|crc/i);
    assert.deepEqual(readdirSync(target), [], 'nothing written');
  });

  it('refuses an archive whose compressed database does not inflate, or whose manifest is no JSON, with UNSUPPORTED_INPUT', async () => {
    const bytes = Buffer.from(await readFile(backup));
    // kiln.db is the first entry and the only compressed one: damage its deflate stream (the process
    // used to die of an unhandled stream error while looking for the manifest).
    assert.equal(bytes.subarray(30, 37).toString(), 'kiln.db');
    for (let i = 200; i < 400; i++) bytes[i] = bytes[i]! ^ 0x55;
    const inflate = path.join(dir, 'bad-deflate.zip');
    await writeFile(inflate, bytes);
    const zip = new yazl.ZipFile();
    for (const [name, data] of await readZip(backup))
      zip.addBuffer(name === 'manifest.json' ? Buffer.from('{"format": "kiln-backup",') : data, name);
    zip.end();
    const badJson = path.join(dir, 'bad-manifest.zip');
    await pipeline(zip.outputStream, createWriteStream(badJson));
    for (const file of [inflate, badJson]) {
      const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
      const r = await kiln(['admin', 'restore', file, '--data-dir', target, '--json']);
      assert.equal(r.code, ERROR_TABLE.UNSUPPORTED_INPUT.exit, `${path.basename(file)}: ${r.stderr}`);
      assert.equal(JSON.parse(r.stdout).error.code, 'UNSUPPORTED_INPUT', r.stdout);
      assert.doesNotMatch(r.stderr, /at .*\(node:|Unhandled/);
      assert.deepEqual(readdirSync(target), [], 'nothing written');
    }
  });

  it('refuses an -o in a missing directory, or naming a directory, with USAGE_ERROR before writing', async () => {
    const folder = mkdtempSync(path.join(dir, 'out-'));
    for (const [out, why] of [
      [path.join(folder, 'missing', 'b.zip'), /its directory cannot be created/],
      [folder, /a directory of that name is in the way/],
    ] as const) {
      const r = await kiln(['admin', 'backup', '-o', out, '--data-dir', s.dataDir, '--json']);
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, r.stderr);
      assert.equal(JSON.parse(r.stdout).error.code, 'USAGE_ERROR');
      assert.match(r.stderr, why);
    }
    assert.deepEqual(readdirSync(folder), [], 'nothing written');
    assert.ok(!readdirSync(dir).some((n) => n.includes('.partial') || n.startsWith('.kiln-backup-')), 'no temp files left');
  });

  it('a backup in a newer archive format is FEATURE_INCOMPATIBLE naming its kiln, not "not a kiln backup"', async () => {
    const entries = await readZip(backup);
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    Object.assign(manifest, { version: 2, kilnVersion: '99.0.0' });
    const zip = new yazl.ZipFile();
    for (const [name, data] of entries) zip.addBuffer(name === 'manifest.json' ? Buffer.from(JSON.stringify(manifest)) : data, name);
    zip.end();
    const newer = path.join(dir, 'newer-format.zip');
    await pipeline(zip.outputStream, createWriteStream(newer));
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
    const r = await kiln(['admin', 'restore', newer, '--data-dir', target, '--json']);
    const err = JSON.parse(r.stdout).error;
    assert.equal(err.code, 'FEATURE_INCOMPATIBLE', r.stdout);
    assert.equal(err.reason, 'backup-newer-than-kiln');
    assert.match(err.message, /99\.0\.0/);
    assert.deepEqual(readdirSync(target), [], 'nothing written');
  });

  it('a daemon refuses a database a newer kiln has migrated; migrate --dry-run lists what is pending', async () => {
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-newer-'));
    assert.equal((await kiln(['admin', 'restore', backup, '--data-dir', target])).code, 0);
    const dry = await kiln(['admin', 'migrate', '--dry-run', '--data-dir', target, '--json']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout).pending, []);
    const { default: Sqlite } = await import('better-sqlite3');
    const db = new Sqlite(path.join(target, 'kiln.db'));
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_from_the_future', new Date().toISOString());
    db.close();
    await assert.rejects(
      startServer({ dataDir: target, generatePassword: true }),
      (e: Error & { code?: string }) => e.code === 'FEATURE_INCOMPATIBLE' && /newer kiln/.test(e.message),
    );
    // `kiln serve` itself: a clear message naming the migration, a non-zero exit, nothing changed.
    const serve = await kiln(['serve', '--port', '0', '--data-dir', target], { env: daemonEnv({ KILN_WARM_ENGINES: 'false' }) });
    assert.notEqual(serve.code, 0);
    assert.match(serve.stderr, /upgraded by a newer kiln \(migration 9999_from_the_future\)/);
    assert.match(serve.stderr, /restore the backup taken before the upgrade/);
    // migrate says the same instead of "up to date".
    for (const args of [['--dry-run'], []]) {
      const m = await kiln(['admin', 'migrate', ...args, '--data-dir', target]);
      assert.notEqual(m.code, 0, m.stdout);
      assert.match(m.stderr, /9999_from_the_future/);
    }
    assert.ok(existsSync(path.join(target, 'kiln.db')));
  });

  it('migrate --dry-run lists the migrations an older database lacks; migrate applies them', async () => {
    const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-older-'));
    // A database as an older kiln left it: every migration up to the third-last.
    const { default: Sqlite } = await import('better-sqlite3');
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Sqlite(path.join(target, 'kiln.db')) }) });
    const names = MIGRATIONS.map((m) => m.name);
    const old = await new Migrator({ db, provider: migrationProvider }).migrateTo(names.at(-3)!);
    await db.destroy();
    assert.equal(old.error, undefined, String(old.error));
    // A backup of it, restored by this kiln, is brought up to date by the restore.
    const oldBackup = path.join(dir, 'older.zip');
    assert.equal((await kiln(['admin', 'backup', '-o', oldBackup, '--data-dir', target])).code, 0);
    const upgraded = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-upgraded-'));
    const restored = await kiln(['admin', 'restore', oldBackup, '--data-dir', upgraded, '--json']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(JSON.parse(restored.stdout).migrations, names.length);
    assert.deepEqual(JSON.parse((await kiln(['admin', 'migrate', '--dry-run', '--data-dir', upgraded, '--json'])).stdout).pending, []);
    const dry = await kiln(['admin', 'migrate', '--dry-run', '--data-dir', target, '--json']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout).pending, names.slice(-2));
    const text = await kiln(['admin', 'migrate', '--dry-run', '--data-dir', target]);
    assert.equal(
      text.stdout,
      `Pending migrations:\n${names
        .slice(-2)
        .map((n) => `  ${n}\n`)
        .join('')}`,
    );
    const applied = await kiln(['admin', 'migrate', '--data-dir', target, '--json']);
    assert.equal(applied.code, 0, applied.stderr);
    assert.deepEqual(JSON.parse(applied.stdout).applied, names.slice(-2));
    const again = await kiln(['admin', 'migrate', '--dry-run', '--data-dir', target, '--json']);
    assert.deepEqual(JSON.parse(again.stdout).pending, []);
    const started = await startServer({ dataDir: target });
    await started.close();
  });

  it('with SHARED_DIR, backs up the library from there; S3_BUCKET is refused with a pointer', async () => {
    const shared = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-shared-'));
    const d = await startServer({ env: { SHARED_DIR: shared } });
    const file = await makeImage(dir, 'shared.png', 33, 21);
    let id: string;
    try {
      const up = await api(d, d.token, 'POST', '/api/v1/files', await form({ file: await filePart(file) }));
      assert.equal(up.status, 201, up.text);
      id = up.body.id;
      const out = path.join(dir, 'shared.zip');
      const r = await kiln(['admin', 'backup', '-o', out, '--data-dir', d.dataDir, '--json'], { env: { SHARED_DIR: shared } });
      assert.equal(r.code, 0, r.stderr);
      // Restored into one data dir (no SHARED_DIR): the file downloads as it was.
      const target = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-restored-'));
      assert.equal((await kiln(['admin', 'restore', out, '--data-dir', target])).code, 0);
      const restored = await startServer({ dataDir: target, generatePassword: true });
      try {
        const token = await login(restored.url, 'admin', d.adminPassword);
        const res = await fetch(`${restored.url}/api/v1/files/${id}/download`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 200);
        assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(await readFile(file)));
      } finally {
        await restored.close();
      }
    } finally {
      await d.close();
    }
    const s3 = await kiln(['admin', 'backup', '-o', path.join(dir, 's3.zip'), '--data-dir', dir], { env: { S3_BUCKET: 'kiln' } });
    assert.equal(s3.code, 2);
    assert.match(s3.stderr, /S3_BUCKET is set/);
  });
});
