import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln, signalMidRun } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

const dir = tempDir();

describe('kiln CLI', () => {
  it('SIGTERM aborts a run like Ctrl-C: exit 143, its workspace removed, no output', async () => {
    // Noise compresses slowly: the run is still going when the signal comes.
    const src = path.join(dir, 'term-noise.png');
    await sharp({
      create: { width: 5000, height: 5000, channels: 3, background: '#000000', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
    })
      .png({ compressionLevel: 0 })
      .toFile(src);
    const tmp = path.join(dir, 'term-tmp');
    mkdirSync(tmp);
    const out = path.join(dir, 'term-out.png');
    assert.equal(await signalMidRun(['compress', src, '-q', '-o', out], tmp), 143);
    assert.deepEqual(readdirSync(tmp), []);
    assert.ok(!existsSync(out));
  });
  it('resizes a file with -o', async () => {
    const src = await makeImage(dir, 'p.jpg', 400, 200);
    const out = path.join(dir, 'small.jpg');
    const r = await kiln(['resize', src, '--width', '100', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const m = await sharp(out).metadata();
    assert.deepEqual([m.width, m.height], [100, 50]);
  });
  it('reads stdin and writes stdout', async () => {
    const src = await makeImage(dir, 'q.png', 40, 20);
    const r = await kiln(['resize', '-', '--width', '20', '-o', '-'], { input: readFileSync(src) });
    assert.equal(r.code, 0, r.stderr);
    const m = await sharp(r.stdoutBuffer).metadata();
    assert.deepEqual([m.width, m.format], [20, 'png']);
  });
  it('runs a batch into a directory with --json lines, and exit 5 when one fails', async () => {
    const a = await makeImage(dir, 'ba.jpg', 100, 100);
    const b = await makeImage(dir, 'bb.png', 100, 100);
    const bad = path.join(dir, 'bc.jpg');
    writeFileSync(bad, 'not an image');
    const outDir = path.join(dir, 'out') + '/';
    const r = await kiln(['resize', a, b, bad, '--width', '10', '-o', outDir, '--json']);
    assert.equal(r.code, 5, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ok: boolean; input: string; error?: { code: string } });
    assert.equal(lines.length, 3);
    assert.equal(lines.filter((l) => l.ok).length, 2);
    assert.equal(lines.find((l) => !l.ok)!.error!.code, 'UNSUPPORTED_INPUT');
    assert.ok(existsSync(path.join(outDir, 'ba.jpg')) && existsSync(path.join(outDir, 'bb.png')));
  });
  it('exit codes: 2 for bad settings, 3 for corrupt input', async () => {
    const src = await makeImage(dir, 'e.png', 10, 10);
    assert.equal((await kiln(['resize', src, '--width', '-5'])).code, 2);
    assert.equal((await kiln(['resize', src, '--bogus', '1'])).code, 2);
    const bad = path.join(dir, 'bad.png');
    writeFileSync(bad, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    assert.equal((await kiln(['resize', bad, '--width', '5', '-o', path.join(dir, 'x.png')])).code, 3);
    assert.ok(!existsSync(path.join(dir, 'x.png')));
  });
  it('refuses to overwrite its input without --force', async () => {
    const src = await makeImage(dir, 'same.png', 50, 50);
    const r = await kiln(['resize', src, '--width', '10', '-o', src]);
    assert.equal(r.code, 2);
    assert.equal((await sharp(src).metadata()).width, 50);
    const f = await kiln(['resize', src, '--width', '10', '-o', src, '--force']);
    assert.equal(f.code, 0, f.stderr);
    assert.equal((await sharp(src).metadata()).width, 10);
  });
  it('lists tools, prints help, version and doctor', async () => {
    const t = await kiln(['tools', '--json']);
    assert.equal(t.code, 0);
    assert.ok((JSON.parse(t.stdout) as { id: string }[]).some((x) => x.id === 'resize'));
    const h = await kiln(['resize', '--help']);
    assert.match(h.stdout, /--without-enlargement/);
    assert.match(h.stdout, /integer 1-16383/);
    assert.match((await kiln(['--version'])).stdout, /^\d+\.\d+\.\d+/);
    const d = await kiln(['doctor', '--json']);
    assert.equal(d.code, 0);
    assert.ok((JSON.parse(d.stdout) as { engines: { id: string; available: boolean }[] }).engines.find((e) => e.id === 'sharp')!.available);
  });

  it('`kiln help TOOL` prints the tool help as `kiln TOOL --help` does; an unknown name is an error saying so', async () => {
    // The list of commands offers `help [command]`, but `kiln help resize` printed the general help on
    // stderr with exit 2 and no word of why.
    for (const name of ['resize', 'jpg-to-png']) {
      const r = await kiln(['help', name]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, (await kiln([name, '--help'])).stdout);
      assert.match(r.stdout, new RegExp(`^Usage: kiln ${name} `));
    }
    const c = await kiln(['help', 'config']);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^Usage: kiln config/);
    const u = await kiln(['help', 'resiz']);
    assert.equal(u.code, 2);
    assert.match(u.stderr, /Unknown tool or command "resiz"\. Did you mean resize\?/);
  });

  it('doctor shows each engine version number, not an error line of the program or a trailing full stop', async () => {
    const d = await kiln(['doctor', '--json']);
    assert.equal(d.code, 0, d.stderr);
    const engines = (JSON.parse(d.stdout) as { engines: { id: string; available: boolean; version?: string }[] }).engines;
    // PocketSphinx has no --version: its "ERROR: cmd_ln.c …" line was shown as the version; potrace's
    // "potrace 1.16. Copyright …" read as "1.16.".
    for (const e of engines.filter((x) => x.available && x.version !== undefined))
      assert.match(e.version!, /^\d[\w.+~:-]*[\w+~]$/, `${e.id}: ${e.version}`);
  });
});
