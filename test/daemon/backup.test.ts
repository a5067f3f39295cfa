/**
 * `kiln admin backup` while the daemon works, and `kiln admin restore` into a new data dir: users sign
 * in, every library version downloads byte-identical; a damaged backup or a non-empty target is refused
 * with nothing written; a database from a newer kiln is refused at start.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kiln } from '../helpers/cli.js';
import { makeImage, makePhoto, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, login, startServer, type TestServer } from '../helpers/server.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const STRONG = 'Correct-Horse-42';

describe('backup and restore', () => {
  let s: TestServer;
  const dir = tempDir('kiln-backup-');
  const originals = new Map<string, string>(); // `${itemId}/${version}` → sha256
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
    // Work going on during the backup: tool runs and more uploads.
    const photo = await makePhoto(dir, 'busy.jpg', 1200, 900);
    const busy = Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        await api(
          s,
          s.token,
          'POST',
          '/api/v1/tools/image/resize',
          await form({ file: await filePart(photo), settings: '{"width": 300}' }),
        );
        await api(s, userToken, 'POST', '/api/v1/files', await form({ file: await filePart(photo, `busy-${i}.jpg`) }));
      }),
    );
    const r = await kiln(['admin', 'backup', '-o', backup, '--data-dir', s.dataDir, '--json']);
    await busy;
    assert.equal(r.code, 0, r.stderr);
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
      for (const [key, digest] of originals) {
        const [id, version] = key.split('/');
        const res = await fetch(`${restored.url}/api/v1/files/${id}/versions/${version}/download`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 200, key);
        assert.equal(sha(Buffer.from(await res.arrayBuffer())), digest, key);
      }
    } finally {
      await restored.close();
    }
    // A second restore into the same (now used) data dir is refused.
    const again = await kiln(['admin', 'restore', backup, '--data-dir', target]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already holds/);
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
    assert.ok(existsSync(path.join(target, 'kiln.db')));
  });
});
