/**
 * The CLI that scripts can trust (issue #15): every failure is a JSON line with --json, one output
 * naming rule with a documented overwrite default, stdin to a redirected stdout, multi-output tools
 * written as separate files, suggestions for typos. Each test runs the real `kiln` process.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

/** Every stdout line parses as JSON, and there is at least one. */
function jsonLines(stdout: string): Record<string, unknown>[] {
  const lines = stdout.trim().split('\n').filter(Boolean);
  assert.ok(lines.length > 0, 'stdout has a JSON line');
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function twoPagePdf(dir: string): Promise<string> {
  const doc = await PDFDocument.create();
  doc.addPage([100, 80]);
  doc.addPage([100, 80]);
  const p = path.join(dir, 'both.pdf');
  writeFileSync(p, await doc.save());
  return p;
}

describe('--json: one JSON line for every failure', () => {
  const dir = tempDir('kiln-json-');
  let photo: string;
  before(async () => {
    photo = await makeImage(dir, 'photo.jpg', 40, 30);
  });

  for (const [label, args, code] of [
    ['a settings error (split-pdf without its range)', ['split-pdf', 'both.pdf', '--json'], 'VALIDATION_ERROR'],
    ['an unknown flag', ['resize', 'photo.jpg', '--bogus', '--json'], 'USAGE_ERROR'],
    ['a missing input', ['resize', '--json'], 'USAGE_ERROR'],
    ['a bad flag value', ['resize', 'photo.jpg', '--width', 'abc', '--json'], 'VALIDATION_ERROR'],
    ['an unknown command', ['resiz', 'photo.jpg', '--json'], 'USAGE_ERROR'],
    ['a command error (no server)', ['jobs', 'list', '--json', '--server', 'http://127.0.0.1:9'], 'UNAVAILABLE'],
  ] as const) {
    it(label, async () => {
      const r = await kiln([...args], { cwd: dir });
      assert.notEqual(r.code, 0);
      const [line, ...rest] = jsonLines(r.stdout);
      assert.equal(rest.length, 0, 'exactly one line');
      assert.equal(line!.ok, false);
      assert.equal((line!.error as { code: string }).code, code, r.stdout);
    });
  }

  it('a batch: one line per input, the failed one included', async () => {
    const bad = path.join(dir, 'bad.jpg');
    writeFileSync(bad, 'not an image');
    const r = await kiln(['resize', photo, bad, '--width', '10', '-o', path.join(dir, 'batch') + '/', '--json']);
    assert.equal(r.code, 5, r.stderr);
    const lines = jsonLines(r.stdout);
    assert.equal(lines.length, 2);
    assert.deepEqual(lines.map((l) => l.ok).sort(), [false, true]);
  });
});

describe('one output naming rule', () => {
  const dir = tempDir('kiln-naming-');
  let photo: string;
  before(async () => {
    photo = await makeImage(dir, 'photo.jpg', 40, 30);
  });

  it('default ./<input>-<tool>.<ext>, the same name on every rerun, replaced by default', async () => {
    // convert used to write photo.png, then photo-convert.png on the rerun.
    for (let i = 0; i < 2; i++) {
      const r = await kiln(['convert', photo, '--format', 'png'], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
    }
    assert.deepEqual(
      readdirSync(dir).filter((n) => n !== 'photo.jpg'),
      ['photo-convert.png'],
    );
    for (let i = 0; i < 2; i++) {
      const r = await kiln(['resize', photo, '--width', String(10 + i)], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
    }
    assert.equal((await sharp(path.join(dir, 'photo-resize.jpg')).metadata()).width, 11, 'the rerun replaced it');
  });

  it('--no-clobber refuses an existing file (exit 2) and leaves it alone; --overwrite with it is a usage error', async () => {
    const before = readFileSync(path.join(dir, 'photo-resize.jpg'));
    const r = await kiln(['resize', photo, '--width', '5', '--no-clobber', '--json'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.equal((jsonLines(r.stdout)[0]!.error as { code: string }).code, 'OUTPUT_EXISTS');
    assert.deepEqual(readFileSync(path.join(dir, 'photo-resize.jpg')), before);
    const both = await kiln(['resize', photo, '--width', '5', '--no-clobber', '--overwrite'], { cwd: dir });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /contradict/);
  });

  it('-o DIR/ is created when missing', async () => {
    const out = path.join(dir, 'new', 'deep') + '/';
    const r = await kiln(['resize', photo, '--width', '10', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await sharp(path.join(out, 'photo.jpg')).metadata()).width, 10);
  });

  it('stdin to a redirected stdout: the image goes to stdout, no ./stdin.jpg', async () => {
    const r = await kiln(['resize', '-', '--width', '12'], { cwd: dir, input: readFileSync(photo) });
    assert.equal(r.code, 0, r.stderr);
    const meta = await sharp(r.stdoutBuffer).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.equal(meta.width, 12);
    assert.equal(existsSync(path.join(dir, 'stdin.jpg')), false);
    assert.equal(existsSync(path.join(dir, 'stdin-resize.jpg')), false);
  });
});

describe('multi-output tools write separate files', () => {
  const dir = tempDir('kiln-multi-');
  let pdf: string;
  before(async () => {
    pdf = await twoPagePdf(dir);
  });

  it('-o DIR/: one image per page', async () => {
    const r = await kiln(['pdf-to-image', pdf, '-o', path.join(dir, 'pages') + '/']);
    assert.equal(r.code, 0, r.stderr);
    const names = readdirSync(path.join(dir, 'pages')).sort();
    assert.equal(names.length, 2);
    for (const n of names) assert.equal((await sharp(path.join(dir, 'pages', n)).metadata()).format, 'png');
  });

  it('a %d pattern numbers them, and its extension picks the format', async () => {
    const r = await kiln(['pdf-to-image', pdf, '-o', path.join(dir, 'p-%02d.jpg'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(jsonLines(r.stdout)[0]!.outputs, [path.join(dir, 'p-01.jpg'), path.join(dir, 'p-02.jpg')]);
    assert.equal((await sharp(path.join(dir, 'p-02.jpg')).metadata()).format, 'jpeg');
  });

  it('--zip keeps the ZIP; a plain file name for several files is a usage error; no -o gives ./<input>-<tool>/', async () => {
    const z = await kiln(['pdf-to-image', pdf, '--zip', '-o', path.join(dir, 'z') + '/']);
    assert.equal(z.code, 0, z.stderr);
    assert.deepEqual(readdirSync(path.join(dir, 'z')), ['both.zip']);
    const one = await kiln(['pdf-to-image', pdf, '-o', path.join(dir, 'one.png')]);
    assert.equal(one.code, 2);
    assert.match(one.stderr, /%d/);
    assert.equal(existsSync(path.join(dir, 'one.png')), false);
    const def = await kiln(['pdf-to-image', pdf], { cwd: dir });
    assert.equal(def.code, 0, def.stderr);
    assert.ok(statSync(path.join(dir, 'both-pdf-to-image')).isDirectory());
    assert.equal(readdirSync(path.join(dir, 'both-pdf-to-image')).length, 2);
  });
});

describe('data tools answer JSON', () => {
  const dir = tempDir('kiln-data-');
  it('color-palette prints its colours on stdout and writes no file; --swatch writes the PNG', async () => {
    const img = await makeImage(dir, 'c.png', 40, 20);
    const r = await kiln(['color-palette', img, '--count', '2'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(r.stdout) as { colors: { hex: string }[] };
    assert.deepEqual(data.colors.map((c) => c.hex).sort(), ['#0000ff', '#ff0000']);
    assert.deepEqual(readdirSync(dir), ['c.png']);
    const s = await kiln(['color-palette', img, '--count', '2', '--swatch'], { cwd: dir });
    assert.equal(s.code, 0, s.stderr);
    assert.equal((await sharp(path.join(dir, 'c-color-palette.png')).metadata()).format, 'png');
  });
});

describe('suggestions and unknown commands', () => {
  it('kiln resiz suggests resize; kiln <unknown> --help exits 2', async () => {
    const r = await kiln(['resiz', 'x.jpg']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Did you mean resize\?/);
    const h = await kiln(['nonexistent-tool', '--help']);
    assert.equal(h.code, 2);
    assert.doesNotMatch(h.stdout, /Usage/);
  });

  it('kiln ocr is the OCR tool (no "doctor" suggestion); a misspelt flag gets the flag', async () => {
    const r = await kiln(['ocr']);
    assert.equal(r.code, 2);
    assert.doesNotMatch(r.stderr, /doctor/);
    assert.match(r.stderr, /missing required argument/);
    const f = await kiln(['resize', 'x.jpg', '--widht', '3']);
    assert.equal(f.code, 2);
    assert.match(f.stderr, /Did you mean --width\?/);
  });

  it('tool help says `Usage: kiln <tool>` and shows no 2^53 bound', async () => {
    const r = await kiln(['content-aware-resize', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: kiln content-aware-resize /);
    assert.doesNotMatch(r.stdout, /9007199254740991/);
  });
});

describe('the output directory of a batch', () => {
  const dir = tempDir('kiln-batchdir-');
  it('two inputs of the same name go to one directory without meeting', async () => {
    mkdirSync(path.join(dir, 'a'));
    mkdirSync(path.join(dir, 'b'));
    const a = await makeImage(path.join(dir, 'a'), 'x.png', 20, 20);
    const b = await makeImage(path.join(dir, 'b'), 'x.png', 30, 30);
    const r = await kiln(['resize', a, b, '--width', '10', '-o', path.join(dir, 'out') + '/']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(path.join(dir, 'out')).sort(), ['x-2.png', 'x.png']);
    const def = await kiln(['resize', a, b, '--width', '10'], { cwd: path.join(dir, 'out') });
    assert.equal(def.code, 0, def.stderr);
    assert.deepEqual(readdirSync(path.join(dir, 'out')).sort(), ['x-2.png', 'x-resize-2.png', 'x-resize.png', 'x.png']);
  });
});
