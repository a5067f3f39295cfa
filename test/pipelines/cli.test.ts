/**
 * The kiln binary as a process: `kiln pipeline run|validate` locally (three image steps; an image step
 * then a PDF step), `kiln pipeline save|list` against a server, and `kiln files` against a server and
 * on a local data dir.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { EXIT } from '../../src/core/errors.js';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { mkvWithSubtitles } from '../helpers/media.js';
import { startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();

function writeJson(name: string, value: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, JSON.stringify(value, null, 2));
  return p;
}

const threeSteps = () =>
  writeJson('web.json', {
    name: 'web',
    steps: [
      { tool: 'resize', settings: { width: 40 } },
      { tool: 'rotate', settings: { angle: 90 } },
      { tool: 'convert', settings: { format: 'webp' } },
    ],
  });

describe('kiln pipeline (local)', () => {
  it('refuses a --concurrency that is no whole number >= 1 before running, as a tool does', async () => {
    const a = await makeImage(dir, 'conc.jpg', 20, 10);
    const out = path.join(dir, 'conc') + '/';
    for (const bad of ['abc', '0', '1.5']) {
      // 'abc' was Number('abc') = NaN, taken as "the default": exit 0.
      const r = await kiln(['pipeline', 'run', threeSteps(), a, '-o', out, '--concurrency', bad, '--local']);
      assert.equal(r.code, EXIT.USAGE, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /--concurrency takes a whole number >= 1/);
      const tool = await kiln(['resize', a, '--width', '5', '-o', out, '--concurrency', bad, '--local']);
      assert.equal(tool.code, EXIT.USAGE, `${bad}: ${tool.stderr}`);
    }
    assert.equal((await kiln(['pipeline', 'run', threeSteps(), a, '-o', out, '--concurrency', '2', '--local'])).code, 0);
  });

  it('runs three image steps on two inputs into a directory', async () => {
    const a = await makeImage(dir, 'a.jpg', 80, 40);
    const b = await makeImage(dir, 'b.png', 80, 40, { format: 'png' });
    const out = path.join(dir, 'out') + '/';
    const r = await kiln(['pipeline', 'run', threeSteps(), a, b, '-o', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 2);
    for (const l of lines) {
      assert.equal(l.ok, true, JSON.stringify(l));
      const meta = await sharp(readFileSync(l.output)).metadata();
      assert.equal(meta.format, 'webp');
      assert.deepEqual([meta.width, meta.height], [20, 40]);
    }
  });

  it('runs image-to-pdf then rotate-pdf', async () => {
    const jpg = await makeImage(dir, 'page.jpg', 60, 30);
    const file = writeJson('topdf.json', { steps: [{ tool: 'image-to-pdf' }, { tool: 'rotate-pdf', settings: { angle: 180 } }] });
    const dest = path.join(dir, 'page.pdf');
    const r = await kiln(['pipeline', 'run', file, jpg, '-o', dest]);
    assert.equal(r.code, 0, r.stderr);
    const pdf = await PDFDocument.load(readFileSync(dest));
    assert.equal(pdf.getPageCount(), 1);
    assert.equal(pdf.getPage(0).getRotation().angle % 360, 180);
  });

  it('prints what its steps left out (data.warnings, named by step) on stderr, as a tool run does; --quiet does not', async () => {
    // An MKV with a subtitle track made AVI, which holds none: only --json said so.
    const src = mkvWithSubtitles(dir, 'p-warn.mkv');
    const file = writeJson('to-avi.json', { steps: [{ tool: 'convert-video', settings: { format: 'avi' } }] });
    const out = path.join(dir, 'p-warn.avi');
    const r = await kiln(['pipeline', 'run', file, src, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /^kiln: .*p-warn\.mkv: warning: step 1\/1 \(convert-video\): subtitle stream 1 \(subrip\) left out: AVI holds no subtitle tracks$/m,
    );
    const quiet = await kiln(['pipeline', 'run', file, src, '-o', out, '--overwrite', '--quiet']);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /warning/);
  });

  it('validates before running: a bad step exits 2 naming the step, and nothing is written', async () => {
    const jpg = await makeImage(dir, 'v.jpg', 20, 20);
    const bad = writeJson('bad.json', { steps: [{ tool: 'resize', settings: { width: 10 } }, { tool: 'rotate-pdf' }] });
    const v = await kiln(['pipeline', 'validate', bad]);
    assert.equal(v.code, EXIT.USAGE);
    assert.match(v.stderr, /step 2 \(rotate-pdf\)/);
    const dest = path.join(dir, 'never.pdf');
    const r = await kiln(['pipeline', 'run', bad, jpg, '-o', dest]);
    assert.equal(r.code, EXIT.USAGE);
    assert.throws(() => readFileSync(dest));
    const ok = await kiln(['pipeline', 'validate', threeSteps()]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /resize → rotate → convert/);
  });

  it('refuses a key it does not know, naming it and the one meant (a `step` typo was dropped and the run did nothing asked)', async () => {
    const jpg = await makeImage(dir, 'typo.jpg', 20, 20);
    const typo = writeJson('typo.json', {
      name: 'typo',
      steps: [{ tool: 'resize', settings: { width: 10 } }],
      descripton: 'x',
      step: [{ tool: 'rotate', settings: { angle: 90 } }],
    });
    const v = await kiln(['pipeline', 'validate', typo, '--json']);
    assert.equal(v.code, EXIT.USAGE, v.stderr);
    const { error } = JSON.parse(v.stdout);
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.deepEqual(
      error.details.map((d: { path: string }) => d.path),
      ['descripton', 'step'],
    );
    assert.match(error.message, /descripton: unknown key "descripton" \(did you mean description\?\)/);
    assert.match(error.message, /step: unknown key "step" \(did you mean steps\?\); a pipeline has name, description, steps/);
    const dest = path.join(dir, 'typo-out.jpg');
    const r = await kiln(['pipeline', 'run', typo, jpg, '-o', dest]);
    assert.equal(r.code, EXIT.USAGE, r.stderr);
    assert.throws(() => readFileSync(dest));
  });

  it('says a directory given as the pipeline is one, not "invalid JSON: EISDIR"', async () => {
    const folder = path.join(dir, 'pipelines-folder');
    mkdirSync(folder, { recursive: true });
    const r = await kiln(['pipeline', 'validate', folder]);
    assert.equal(r.code, EXIT.USAGE, r.stderr);
    assert.match(r.stderr, /pipelines-folder is a directory; give a pipeline file/);
    assert.doesNotMatch(r.stderr, /EISDIR|not valid JSON/);
  });
});

describe('kiln pipeline save|list and kiln files against a server', () => {
  let s: TestServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    s = await startServer();
    const res = await fetch(`${s.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli' }),
    });
    const key = ((await res.json()) as { key: string }).key;
    env = { KILN_SERVER: s.url, KILN_API_KEY: key, XDG_CONFIG_HOME: path.join(dir, 'cfg') };
  });
  after(() => s.close());

  it('saves a pipeline (again: replaces it) and lists it', async () => {
    const file = threeSteps();
    const first = await kiln(['pipeline', 'save', file, '--json'], { env });
    assert.equal(first.code, 0, first.stderr);
    const saved = JSON.parse(first.stdout);
    assert.equal(saved.name, 'web');
    const again = await kiln(['pipeline', 'save', file, '--json'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).id, saved.id);
    const list = await kiln(['pipeline', 'list'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /web\s+resize → rotate → convert/);
    // The saved pipeline runs on the server.
    const run = await fetch(`${s.url}/api/v1/pipelines/web/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.KILN_API_KEY}` },
      body: await (async () => {
        const fd = new FormData();
        fd.append('file', new File([readFileSync(await makeImage(dir, 'srv.jpg', 80, 40))], 'srv.jpg'));
        return fd;
      })(),
    });
    assert.equal(run.status, 200);
  });

  it('kiln pipeline rm deletes a saved pipeline by name; a second time it is not found', async () => {
    const file = writeJson('gone.json', { name: 'gone', steps: [{ tool: 'resize', settings: { width: 10 } }] });
    assert.equal((await kiln(['pipeline', 'save', file], { env })).code, 0);
    const rm = await kiln(['pipeline', 'rm', 'gone', '--json'], { env });
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(JSON.parse(rm.stdout).deleted, true);
    const list = await kiln(['pipeline', 'list', '--json'], { env });
    assert.ok(!(JSON.parse(list.stdout) as { name: string }[]).some((p) => p.name === 'gone'), list.stdout);
    const again = await kiln(['pipeline', 'rm', 'gone'], { env });
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stderr, /gone/);
  });

  it('runs a pipeline whose first step takes no file, locally and saved on the server', async () => {
    // kiln pipeline run needed <inputs...>, and the server's run route wanted multipart with a "file".
    const file = writeJson('qr.json', {
      name: 'qr',
      steps: [{ tool: 'qr-generate', settings: { data: 'hello', size: 120 } }, { tool: 'png-to-jpg' }],
    });
    for (const [where, ref, extra] of [
      ['local', file, ['--local']],
      ['server', 'qr', []],
    ] as const) {
      if (where === 'server') assert.equal((await kiln(['pipeline', 'save', file], { env })).code, 0);
      const out = path.join(dir, `qr-${where}`) + '/';
      const r = await kiln(['pipeline', 'run', ref, '-o', out, '--json', ...extra], { env });
      assert.equal(r.code, 0, `${where}: ${r.stderr}`);
      const meta = await sharp(readFileSync(JSON.parse(r.stdout).output)).metadata();
      assert.equal(meta.format, 'jpeg', where);
    }
    // A pipeline that takes a file still needs one.
    const web = await kiln(['pipeline', 'run', threeSteps(), '--local'], { env });
    assert.equal(web.code, EXIT.USAGE, web.stderr);
    assert.match(web.stderr, /needs an input file/);
  });

  it('uploads, lists, shows versions, downloads and removes library items', async () => {
    const png = await makeImage(dir, 'lib.png', 30, 30, { format: 'png' });
    const up = await kiln(['files', 'upload', png, '--json'], { env });
    assert.equal(up.code, 0, up.stderr);
    const item = JSON.parse(up.stdout);
    // A tool run on the item from the CLI adds version 2.
    const run = await kiln(['resize', '--file-id', item.id, '--width', '10', '-o', path.join(dir, 'small.png'), '--force'], { env });
    assert.equal(run.code, 0, run.stderr);
    const list = await kiln(['files', 'list', '--type', 'image'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${item.id}\\s+lib\\.png\\s+v2`), list.stderr);
    const versions = await kiln(['files', 'versions', item.id], { env });
    assert.match(versions.stdout, /v2 .*tool resize/);
    assert.match(versions.stdout, /v1 .*upload/);
    const dest = path.join(dir, 'v1.png');
    const get = await kiln(['files', 'get', item.id, '--ver', '1', '-o', dest], { env });
    assert.equal(get.code, 0, get.stderr);
    assert.deepEqual(readFileSync(dest), readFileSync(png));
    // An existing file is replaced by default (README "Output files"); --no-clobber refuses it.
    const exists = await kiln(['files', 'get', item.id, '-o', dest, '--no-clobber'], { env });
    assert.equal(exists.code, EXIT.USAGE);
    const rmv = await kiln(['files', 'rm', item.id, '--ver', '1'], { env });
    assert.equal(rmv.code, 0, rmv.stderr);
    const rm = await kiln(['files', 'rm', item.id], { env });
    assert.equal(rm.code, 0, rm.stderr);
    const gone = await kiln(['files', 'versions', item.id], { env });
    assert.equal(gone.code, EXIT.OTHER);
    assert.match(gone.stderr, /No library item/);
  });

  it('kiln files get names the download after the item as renamed, on a server and on a local data dir', async () => {
    const png = await makeImage(dir, 'IMG_7.png', 10, 10, { format: 'png' });
    const local = {
      KILN_SERVER: '',
      KILN_API_KEY: '',
      XDG_CONFIG_HOME: path.join(dir, 'cfg-ren'),
      KILN_DATA_DIR: path.join(dir, 'ren-data'),
    };
    for (const [where, e] of [
      ['server', env],
      ['local', local],
    ] as const) {
      const item = JSON.parse((await kiln(['files', 'upload', png, '--json'], { env: e })).stdout);
      if (where === 'server') {
        const res = await fetch(`${s.url}/api/v1/files/${item.id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'garden.png' }),
        });
        assert.equal(res.status, 200);
      } else {
        const { openStore } = await import('../../daemon/store/db.js');
        const store = await openStore({ dataDir: local.KILN_DATA_DIR });
        await store.db.updateTable('library_items').set({ name: 'garden.png' }).where('id', '=', item.id).execute();
        await store.close();
      }
      const out = path.join(dir, `ren-${where}`) + '/';
      const get = await kiln(['files', 'get', item.id, '-o', out, '--json'], { env: e });
      assert.equal(get.code, 0, get.stderr);
      assert.equal(path.basename(JSON.parse(get.stdout).output), 'garden.png', where);
      assert.deepEqual(readFileSync(path.join(out, 'garden.png')), readFileSync(png));
      await kiln(['files', 'rm', item.id], { env: e });
    }
  });

  it('refuses a directory given to kiln files upload before uploading anything (server and local data dir)', async () => {
    const folder = path.join(dir, 'a-folder');
    mkdirSync(folder, { recursive: true });
    const local = {
      KILN_SERVER: '',
      KILN_API_KEY: '',
      XDG_CONFIG_HOME: path.join(dir, 'cfg-dir'),
      KILN_DATA_DIR: path.join(dir, 'dir-data'),
    };
    const count = async () => JSON.parse((await kiln(['files', 'list', '--json'], { env })).stdout).total as number;
    const before = await count();
    for (const e of [env, local]) {
      const r = await kiln(['files', 'upload', folder], { env: e });
      assert.equal(r.code, EXIT.INPUT, r.stderr);
      assert.match(r.stderr, /a-folder is not a regular file but a directory: name its files \(.*a-folder\/\*\.jpg\)/);
      assert.doesNotMatch(r.stderr, /Cannot reach|EISDIR/);
    }
    assert.equal(await count(), before);
  });

  it('works on a local data dir without a server', async () => {
    const dataDir = path.join(dir, 'local-data');
    const local = { KILN_SERVER: '', KILN_API_KEY: '', XDG_CONFIG_HOME: path.join(dir, 'cfg-local'), KILN_DATA_DIR: dataDir };
    const jpg = await makeImage(dir, 'here.jpg', 16, 16);
    const up = await kiln(['files', 'upload', jpg, '--name', 'mine.jpg', '--json'], { env: local });
    assert.equal(up.code, 0, up.stderr);
    const item = JSON.parse(up.stdout);
    assert.equal(item.name, 'mine.jpg');
    const list = await kiln(['files', 'list', '--json'], { env: local });
    assert.deepEqual(
      JSON.parse(list.stdout).items.map((i: { id: string }) => i.id),
      [item.id],
    );
    const out = path.join(dir, 'back.jpg');
    assert.equal((await kiln(['files', 'get', item.id, '-o', out], { env: local })).code, 0);
    assert.deepEqual(readFileSync(out), readFileSync(jpg));
    assert.equal((await kiln(['files', 'rm', item.id], { env: local })).code, 0);
    assert.deepEqual(JSON.parse((await kiln(['files', 'list', '--json'], { env: local })).stdout).items, []);
  });
});
