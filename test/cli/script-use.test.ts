/**
 * The CLI as shell scripts use it: a reader that closes stdout early, SIGTERM during a pipeline run, and
 * an output that is the input reached through a symbolic link.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { KILN, kiln, signalMidRun } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { mkvWithSubtitles } from '../helpers/media.js';

const dir = tempDir();

function noise(name: string, size: number): Promise<string> {
  const p = path.join(dir, name);
  return sharp({
    create: { width: size, height: size, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  })
    .png({ compressionLevel: 0 })
    .toFile(p)
    .then(() => p);
}

describe('kiln in shell scripts', () => {
  it('a closed stdout (`-o - | head -c 10`) ends the run quietly, exit 0, its workspace removed', async () => {
    // ~500 KB of PNG: more than a pipe holds, so the write after the reader left fails with EPIPE.
    const src = await noise('pipe-noise.png', 400);
    const tmp = path.join(dir, 'pipe-tmp');
    mkdirSync(tmp);
    const child = spawn(process.execPath, [KILN, 'resize', src, '--width', '399', '-o', '-'], {
      env: { ...process.env, KILN_TMP_DIR: tmp },
    });
    let stderr = '';
    let got = 0;
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout.once('data', (b: Buffer) => {
      got = b.length;
      child.stdout.destroy();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.ok(got > 0, 'no output came');
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Error/);
    // The process used to exit on the spot: the workspace with its 470 KB output stayed in the temp dir.
    assert.deepEqual(readdirSync(tmp), []);
  });

  it('SIGTERM stops `kiln pipeline run` like a tool run: exit 143, workspace removed, no output', async () => {
    const src = await noise('pl-noise.png', 4000);
    const pipeline = path.join(dir, 'slow.json');
    writeFileSync(pipeline, JSON.stringify({ steps: [{ tool: 'compress' }, { tool: 'rotate', settings: { angle: 90 } }] }));
    const tmp = path.join(dir, 'pl-tmp');
    mkdirSync(tmp);
    const out = path.join(dir, 'pl-out.png');
    // Without a handler node ended on the signal itself (status null), leaving the workspace.
    assert.equal(await signalMidRun(['pipeline', 'run', pipeline, src, '-o', out], tmp), 143);
    assert.deepEqual(readdirSync(tmp), []);
    assert.ok(!existsSync(out));
  });

  it('refuses to replace the input reached through a symbolic link (file or directory) without --force', async () => {
    const orig = await makeImage(dir, 'orig.png', 50, 40);
    const link = path.join(dir, 'link.png');
    symlinkSync(orig, link);
    const linkDir = path.join(dir, 'linkdir');
    symlinkSync(dir, linkDir);
    for (const [input, out] of [
      [link, orig],
      [orig, path.join(linkDir, 'orig.png')],
      [link, link],
    ] as const) {
      const r = await kiln(['resize', input, '--width', '10', '-o', out, '--json']);
      assert.equal(r.code, 2, `${input} -o ${out}: ${r.stderr}`);
      assert.equal((JSON.parse(r.stdout) as { error: { code: string } }).error.code, 'OUTPUT_EXISTS');
      assert.equal((await sharp(orig).metadata()).width, 50, `${input} -o ${out} replaced the input`);
    }
    const f = await kiln(['resize', link, '--width', '10', '-o', orig, '--force']);
    assert.equal(f.code, 0, f.stderr);
    assert.equal((await sharp(orig).metadata()).width, 10);
  });

  it('an -o FILE that is an input or exists with --no-clobber is refused before the run, not after it', async () => {
    const src = await makeImage(dir, 'first.png', 30, 20);
    const existing = path.join(dir, 'existing.png');
    writeFileSync(existing, 'keep me');
    for (const args of [
      ['-o', existing, '--no-clobber'],
      ['-o', src],
    ]) {
      const r = await kiln(['resize', src, '--width', '10', ...args, '--json']);
      assert.equal(r.code, 2, r.stderr);
      const line = JSON.parse(r.stdout) as { input: string | null; error: { code: string } };
      assert.equal(line.error.code, 'OUTPUT_EXISTS');
      // input null: refused before any input ran (it was the item's error after a whole run, an encode thrown away).
      assert.equal(line.input, null, r.stdout);
    }
    assert.equal(readFileSync(existing, 'utf8'), 'keep me');
    assert.equal((await sharp(src).metadata()).width, 30);
  });

  it('Ctrl-C while stdin (-) is still coming stops the run: exit 130, workspace removed', async () => {
    const tmp = path.join(dir, 'stdin-tmp');
    mkdirSync(tmp);
    const child = spawn(process.execPath, [KILN, 'resize', '-', '--width', '5', '-o', path.join(dir, 'stdin-out.png')], {
      env: { ...process.env, KILN_TMP_DIR: tmp },
    });
    child.stdin.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const exited = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    for (let i = 0; i < 300 && readdirSync(tmp).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(readdirSync(tmp).length > 0, 'the run never made its workspace');
    child.kill('SIGINT');
    // kiln used to wait on for the end of stdin: ended here after 5 s, with the stdin still open.
    const late = setTimeout(() => child.kill('SIGKILL'), 5000);
    const code = await exited;
    clearTimeout(late);
    assert.equal(code, 130);
    assert.deepEqual(readdirSync(tmp), []);
  });

  it('an unknown flag exits 2 with a hint naming the --help to read', async () => {
    const src = await makeImage(dir, 'hint.png', 10, 10);
    const t = await kiln(['resize', src, '--bogus', '1']);
    assert.equal(t.code, 2);
    assert.match(t.stderr, /unknown option '--bogus'\n\(kiln resize --help lists the flags\)/);
    const c = await kiln(['jobs', 'list', '--bogus']);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /--help lists/);
    assert.equal(c.stdout, '');
    // The same for a subcommand of features, whose list is the default, and for a bundle name that is none.
    const f = await kiln(['features', 'bogus']);
    assert.equal(f.code, 2);
    assert.match(f.stderr, /unknown command 'bogus'/);
    const r = await kiln(['features', 'remove', 'nosuch', '--local']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /No feature bundle named nosuch; bundles: background-removal/);
  });

  it('-o - with --json is a usage error: the JSON line is not written after the image bytes', async () => {
    const src = await makeImage(dir, 'both.png', 10, 10);
    const r = await kiln(['resize', src, '--width', '5', '-o', '-', '--json']);
    assert.equal(r.code, 2, r.stderr);
    // stdout is the one JSON line, nothing else (it was the PNG followed by {"input":…,"output":"-"}).
    const line = JSON.parse(r.stdout) as { input: string | null; error: { code: string } };
    assert.equal(line.error.code, 'USAGE_ERROR');
    const plain = await kiln(['resize', src, '--width', '5', '-o', '-']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal((await sharp(plain.stdoutBuffer).metadata()).width, 5);
  });

  it('a plain run prints what the tool left out (data.warnings) on stderr; --quiet does not', async () => {
    // An MKV with a subtitle track converted to AVI, which holds none: --json said so, a plain run did not.
    const src = mkvWithSubtitles(dir, 'warn.mkv');
    const out = path.join(dir, 'warn.avi');
    const r = await kiln(['convert-video', src, '--format', 'avi', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^kiln: .*warn\.mkv: warning: subtitle stream 1 \(subrip\) left out: AVI holds no subtitle tracks$/m);
    assert.equal(r.stdout, '');
    const quiet = await kiln(['convert-video', src, '--format', 'avi', '-o', out, '--quiet']);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /warning/);
  });

  it('a file whose name is not UTF-8 is named as such, not only "No such file"', async () => {
    const png = await makeImage(dir, 'latin1-src.png', 8, 8);
    // "café.png" in Latin-1: node reads arguments as UTF-8, the \xe9 byte becomes U+FFFD.
    const raw = Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.png')]);
    writeFileSync(raw, readFileSync(png));
    const r = spawn('sh', [
      '-c',
      `exec "$0" "$1" resize "$(printf '%s/caf\\351.png' "$2")" --width 4 -o "$2/latin1-out.png"`,
      process.execPath,
      KILN,
      dir,
    ]);
    let stderr = '';
    r.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => r.on('close', resolve));
    assert.equal(code, 1, stderr);
    assert.match(stderr, /No such file: .*caf\uFFFD\.png\. Its name is not valid UTF-8 .*convmv/);
    assert.equal(existsSync(path.join(dir, 'latin1-out.png')), false);
  });
});
