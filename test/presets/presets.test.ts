/**
 * Every one of the 83 conversion presets, run once through runTool(presetTool(...)) on a tiny input
 * made here, with the output's format read from its bytes; a handful again over HTTP and as CLI
 * commands; and the wrong input type (a PNG to jpg-to-png) answering UNSUPPORTED_INPUT naming what
 * the preset takes (CLI exit 3, HTTP 415).
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument, rgb } from '@cantoo/pdf-lib';
import { EXIT, type KilnError } from '../../src/core/errors.js';
import { exec } from '../../src/core/process.js';
import { sniffFile } from '../../src/core/sniff.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { findTool } from '../../src/tools/index.js';
import { PRESETS, presetTool, type Preset } from '../../src/tools/presets.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { makeAudio, makeVideo } from '../helpers/media.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir('kiln-presets-');
const NORMAL: Record<string, string> = { jpeg: 'jpg', tif: 'tiff', oga: 'ogg', opus: 'ogg', qt: 'mov', mkv: 'mkv', matroska: 'mkv' };
const norm = (ext: string) => NORMAL[ext.replace(/^\./, '').toLowerCase()] ?? ext.replace(/^\./, '').toLowerCase();

function preset(id: string): Preset {
  const p = PRESETS.find((x) => x.id === id);
  assert.ok(p, id);
  return p;
}

async function runPreset(p: Preset, input: string): Promise<{ out: string; name: string; ext: string; mime: string }> {
  const base = findTool(p.tool);
  assert.ok(base, `base tool ${p.tool} of ${p.id}`);
  const ws = await createWorkspace(dir, `${p.id}-`);
  const outcome = await runTool(presetTool(p, base), { files: [await inputFile(input)], extra: {} }, {}, { workDir: ws.dir, dataDir: dir });
  assert.ok(outcome.output, `${p.id} produced a file`);
  const kind = await sniffFile(outcome.output.path, outcome.output.name);
  return { out: outcome.output.path, name: outcome.output.name, ext: kind.ext, mime: kind.mime };
}

/** Inputs by extension, each made once (later ones from earlier ones through kiln's own tools). */
const inputs = new Map<string, Promise<string>>();
function inputFor(ext: string): Promise<string> {
  let p = inputs.get(ext);
  if (!p) {
    p = makeInput(ext);
    inputs.set(ext, p);
  }
  return p;
}

async function makeInput(ext: string): Promise<string> {
  const file = `in.${ext}`;
  switch (ext) {
    case 'jpg':
    case 'png':
    case 'webp':
    case 'gif':
    case 'tiff':
      return makeImage(dir, file, 48, 32, { format: ext === 'jpg' ? 'jpeg' : ext });
    case 'heic': {
      const r = await runPreset({ ...preset('png-to-jpg'), id: 'make-heic', fixed: { format: 'heic' } }, await inputFor('png'));
      const dest = path.join(dir, file);
      copyFileSync(r.out, dest);
      return dest;
    }
    case 'eps': {
      const r = await runPreset(preset('png-to-eps'), await inputFor('png'));
      const dest = path.join(dir, file);
      copyFileSync(r.out, dest);
      return dest;
    }
    case 'psd': {
      // sharp cannot write Photoshop files; ImageMagick can.
      const dest = path.join(dir, file);
      await exec('/usr/bin/convert', [await inputFor('png'), dest], { timeoutMs: 30_000 });
      return dest;
    }
    case 'svg': {
      const dest = path.join(dir, file);
      writeFileSync(
        dest,
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="20" height="20" fill="red"/><rect x="20" width="20" height="20" fill="blue"/></svg>',
      );
      return dest;
    }
    case 'pdf': {
      const doc = await PDFDocument.create();
      const page = doc.addPage([72, 72]);
      page.drawRectangle({ x: 10, y: 10, width: 30, height: 30, color: rgb(1, 0, 0) });
      const dest = path.join(dir, file);
      writeFileSync(dest, await doc.save());
      return dest;
    }
    case 'xlsx': {
      const { default: ExcelJS } = await import('exceljs');
      const wb = new ExcelJS.Workbook();
      const ws = wb.addWorksheet('Sheet1');
      ws.addRow(['fruit', 'count']);
      ws.addRow(['apple', 3]);
      const dest = path.join(dir, file);
      await wb.xlsx.writeFile(dest);
      return dest;
    }
    case 'mp4':
    case 'mov':
    case 'mkv':
    case 'webm':
    case 'avi':
      return makeVideo(dir, file, { width: 32, height: 24, durationS: 0.3, fps: 10 });
    case 'm4a':
      return makeAudio(dir, file, { durationS: 0.3, extra: ['-c:a', 'aac'] });
    case 'aac':
      return makeAudio(dir, file, { durationS: 0.3, extra: ['-c:a', 'aac', '-f', 'adts'] });
    case 'ogg':
      return makeAudio(dir, file, { durationS: 0.3, extra: ['-c:a', 'libvorbis'] });
    case 'mp3':
    case 'wav':
    case 'flac':
      return makeAudio(dir, file, { durationS: 0.3 });
    default:
      throw new Error(`no fixture for .${ext}`);
  }
}

describe('the 83 presets', () => {
  it('are exactly the 83 of the catalog', () => {
    assert.equal(PRESETS.length, 83);
    assert.equal(new Set(PRESETS.map((p) => p.id)).size, 83);
  });

  // A few at a time: the runs are tiny, so process start-up rather than encoding dominates.
  describe('each runs once and produces its format', { concurrency: 3 }, () => {
    for (const p of PRESETS) {
      const inExt = norm(p.accept[0]!);
      it(`${p.id}: .${inExt} → ${p.outputExtension}`, async () => {
        const r = await runPreset(p, await inputFor(inExt));
        assert.equal(path.extname(r.name), p.outputExtension, `output name ${r.name}`);
        if (p.outputExtension === '.csv') {
          // CSV has no magic bytes: read it back.
          assert.match(readFileSync(r.out, 'utf8'), /fruit,count\r?\napple,3/);
        } else {
          assert.equal(norm(r.ext), norm(p.outputExtension), `${p.id} made ${r.mime}`);
        }
      });
    }
  });

  it('refuses a PNG given to jpg-to-png with UNSUPPORTED_INPUT naming what it takes', async () => {
    const png = await inputFor('png');
    const renamed = path.join(dir, 'looks-like.jpg');
    copyFileSync(png, renamed);
    const p = preset('jpg-to-png');
    await assert.rejects(
      runTool(presetTool(p, findTool(p.tool)!), { files: [await inputFile(renamed)], extra: {} }, {}, { workDir: dir, dataDir: dir }),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /\.jpg/.test(e.message) && /png/i.test(e.message),
    );
    const cli = await kiln(['jpg-to-png', renamed, '-o', path.join(dir, 'never.png')]);
    assert.equal(cli.code, EXIT.INPUT, cli.stderr);
    assert.equal(EXIT.INPUT, 3);
    assert.match(cli.stderr, /is a png file.*takes \.jpg/);
  });

  it('runs as a CLI command (kiln png-to-webp)', async () => {
    for (const [id, ext, out] of [['png-to-webp', 'png', 'webp']] as const) {
      const dest = path.join(dir, `cli-out.${out}`);
      const r = await kiln([id, await inputFor(ext), '-o', dest, '--force']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(norm((await sniffFile(dest)).ext), out);
    }
  });
});

describe('presets over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());
  const auth = () => ({ authorization: `Bearer ${s.token}` });

  for (const id of ['png-to-jpg', 'svg-to-png', 'pdf-to-png', 'mov-to-mp4', 'flac-to-mp3']) {
    it(`POST /api/v1/tools/<section>/${id}`, async () => {
      const p = preset(id);
      const res = await fetch(`${s.url}/api/v1/tools/${p.section}/${id}`, {
        method: 'POST',
        headers: auth(),
        body: await form({ file: await filePart(await inputFor(norm(p.accept[0]!))) }),
      });
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      const bytes = Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth() })).arrayBuffer());
      const out = path.join(dir, `http-${id}${p.outputExtension}`);
      writeFileSync(out, bytes);
      if (p.outputExtension === '.csv') assert.match(bytes.toString('utf8'), /apple,3/);
      else assert.equal(norm((await sniffFile(out, 'x.bin')).ext), norm(p.outputExtension));
    });
  }

  it('answers 415 UNSUPPORTED_INPUT for a PNG sent to jpg-to-png', async () => {
    const res = await fetch(`${s.url}/api/v1/tools/image/jpg-to-png`, {
      method: 'POST',
      headers: auth(),
      body: await form({ file: await filePart(await inputFor('png'), 'photo.jpg') }),
    });
    const body = await res.json();
    assert.equal(res.status, 415);
    assert.equal(body.error.code, 'UNSUPPORTED_INPUT');
    assert.match(body.error.message, /jpg-to-png takes .*\.jpg/);
  });
});
