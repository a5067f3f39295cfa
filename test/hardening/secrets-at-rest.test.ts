/**
 * Issue #16 item 5: the data dir is private (0700, files 0600), TOTP secrets are encrypted at rest
 * (clear ones from older versions are encrypted at the next start), saved pipelines keep their passwords
 * encrypted and never show them, yet still run with them; a daemon with another data key refuses to start.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { loadDataKey } from '../../daemon/auth/data-key.js';
import { resolveConfig } from '../../daemon/config.js';
import { buildServer } from '../../daemon/server.js';
import { describeSettings } from '../../src/core/settings.js';
import { TOOLS } from '../../src/tools/index.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { call, makeUser, STRONG } from '../daemon/accounts/http.js';

const code = (secret: string, step = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: Date.now() + step * 30_000,
  });

/** Every file and directory under `dir` with its permission bits. */
function modes(dir: string): { p: string; mode: number; dir: boolean }[] {
  const out: { p: string; mode: number; dir: boolean }[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const st = statSync(p);
    out.push({ p, mode: st.mode & 0o777, dir: e.isDirectory() });
    if (e.isDirectory()) out.push(...modes(p));
  }
  return out;
}

describe('secrets at rest', () => {
  let s: TestServer;
  const work = tempDir('kiln-secrets-');
  let pdf: string;

  before(async () => {
    s = await startServer({ env: { LOGIN_MAX_FAILURES: '50' } });
    const { PDFDocument } = await import('@cantoo/pdf-lib');
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    pdf = path.join(work, 'plain.pdf');
    await writeFile(pdf, await doc.save());
  });
  after(() => s.close());

  it('the data dir is 0700 and everything the daemon writes in it is private (database, key, job files, library blobs)', async () => {
    const png = await makeImage(work, 'a.png', 8, 8);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(png), settings: '{"width": 4}' }),
    );
    assert.equal(run.status, 200, run.text);
    assert.equal((await api(s, s.token, 'POST', '/api/v1/files', await form({ file: await filePart(png) }))).status, 201);
    assert.equal(statSync(s.dataDir).mode & 0o777, 0o700);
    const all = modes(s.dataDir);
    for (const name of ['kiln.db', 'secret.key'])
      assert.ok(
        all.some((f) => path.basename(f.p) === name),
        `${name} exists`,
      );
    assert.ok(
      all.some((f) => f.p.includes(`${path.sep}library${path.sep}blobs${path.sep}`) && !f.dir),
      'a library blob exists',
    );
    assert.ok(
      all.some((f) => f.p.includes(`${path.sep}jobs${path.sep}`) && !f.dir),
      'a job output exists',
    );
    const open = all.filter((f) => (f.mode & 0o077) !== 0).map((f) => `${path.relative(s.dataDir, f.p)} ${f.mode.toString(8)}`);
    assert.deepEqual(open, [], 'nothing readable by group or others');
  });

  it('TOTP secrets are stored encrypted, and clear ones left by older versions are encrypted at the next start', async () => {
    const u = await makeUser(s, 'totp-user');
    const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
    assert.equal(e.status, 200, JSON.stringify(e.json));
    const row = () => s.app.kiln.store.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    assert.match((await row()).mfa_pending_secret!, /^enc:v1:/);
    assert.ok(!(await row()).mfa_pending_secret!.includes(e.json.secret));
    assert.equal((await call(s, 'POST', '/api/auth/mfa/verify', { token: u.token, body: { code: code(e.json.secret, -1) } })).status, 200);
    const stored = (await row()).mfa_secret!;
    assert.match(stored, /^enc:v1:/);

    // A secret from before encryption at rest: stored in clear, as older versions did.
    await s.app.kiln.store.db.updateTable('users').set({ mfa_secret: e.json.secret, mfa_last_step: null }).where('id', '=', u.id).execute();
    s = await s.restart();
    const migrated = (await row()).mfa_secret!;
    assert.match(migrated, /^enc:v1:/);
    assert.notEqual(migrated, stored, 'a fresh IV');
    const l = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'totp-user', password: STRONG } });
    assert.equal(l.json.requiresMfa, true);
    const ok = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: l.json.mfaToken, code: code(e.json.secret) },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.ok(ok.json.token);
  });

  it('every setting named like a password is declared secret by its tool', () => {
    const undeclared = TOOLS.flatMap((t) =>
      describeSettings(t)
        .filter((i) => /password|secret|passphrase|token/i.test(i.name) && !i.secret)
        .map((i) => `${t.id}.${i.name}`),
    );
    assert.deepEqual(undeclared, []);
  });

  it('saved pipelines store passwords encrypted, never show them, and still run with them', async () => {
    const steps = [{ tool: 'protect-pdf', settings: { userPassword: 'hunter2-secret', ownerPassword: 'boss-secret-9' } }];
    const created = await api(s, s.token, 'POST', '/api/v1/pipelines', { name: 'lock-it', steps });
    assert.equal(created.status, 201, created.text);
    for (const r of [
      created,
      await api(s, s.token, 'GET', '/api/v1/pipelines'),
      await api(s, s.token, 'GET', `/api/v1/pipelines/${created.body.id}`),
    ]) {
      assert.ok(!/hunter2|boss-secret/.test(r.text), r.text);
      assert.match(r.text, /"userPassword":"\[redacted\]"/);
    }
    const row = await s.app.kiln.store.db
      .selectFrom('pipelines')
      .select('definition')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    assert.ok(!/hunter2|boss-secret/.test(row.definition), row.definition);
    assert.match(row.definition, /"userPassword":"enc:v1:/);

    const runIt = async () => {
      const r = await api(s, s.token, 'POST', `/api/v1/pipelines/${created.body.id}/run`, await form({ file: await filePart(pdf) }));
      assert.equal(r.status, 200, r.text);
      const out = path.join(work, `out-${Date.now()}.pdf`);
      await writeFile(
        out,
        Buffer.from(await (await fetch(s.url + r.body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } })).arrayBuffer()),
      );
      // qpdf opens it with the saved password only: the run used the decrypted secret.
      execFileSync('qpdf', ['--password=hunter2-secret', '--check', out]);
      assert.throws(() => execFileSync('qpdf', ['--password=[redacted]', '--check', out], { stdio: 'pipe' }));
      const job = await api(s, s.token, 'GET', `/api/v1/jobs/${r.body.jobId}`);
      assert.ok(!/hunter2|boss-secret/.test(job.text), job.text);
    };
    await runIt();

    // Sending the redacted view back (an edit of something else) keeps the stored password.
    const view = (await api(s, s.token, 'GET', `/api/v1/pipelines/${created.body.id}`)).body;
    const put = await api(s, s.token, 'PUT', `/api/v1/pipelines/${created.body.id}`, {
      name: 'lock-it',
      description: 'edited',
      steps: view.steps,
    });
    assert.equal(put.status, 200, put.text);
    await runIt();
    // A redacted placeholder with nothing stored behind it is refused, not saved as the password.
    const bad = await api(s, s.token, 'POST', '/api/v1/pipelines', { name: 'bad', steps: view.steps });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
  });

  it('clear pipeline passwords from older versions are encrypted at start; another data key is refused', async () => {
    const id = 'oldpipeline0000000000000';
    const definition = JSON.stringify({ name: 'old', steps: [{ tool: 'unlock-pdf', settings: { password: 'clear-old-pw' } }] });
    const ownerId = (await api(s, s.token, 'GET', '/api/auth/session')).body.user.id;
    await s.app.kiln.store.db
      .insertInto('pipelines')
      .values({ id, owner_id: ownerId, name: 'old', description: null, definition, created_at: Date.now(), updated_at: Date.now() })
      .execute();
    s = await s.restart();
    const row = await s.app.kiln.store.db.selectFrom('pipelines').select('definition').where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(!row.definition.includes('clear-old-pw'));
    assert.match(row.definition, /enc:v1:/);

    const config = resolveConfig(
      { port: 0, dataDir: s.dataDir },
      { SECRET_KEY: 'ab'.repeat(32), DATABASE_URL: s.config.databaseUrl ?? '' },
    );
    await assert.rejects(
      buildServer(config),
      (e: { code?: string; reason?: string }) => e.code === 'FEATURE_INCOMPATIBLE' && e.reason === 'data-key-mismatch',
    );
    await assert.rejects(
      loadDataKey('too-short', work),
      (e: { code?: string; message: string }) => e.code === 'USAGE_ERROR' && /openssl rand/.test(e.message),
    );
  });
});
