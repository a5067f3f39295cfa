/**
 * ocr: text rendered here (several fonts and sizes, a rotated noisy scan, two columns, Korean) read
 * back at every tier, with the character accuracy measured and reported; the refusals made before a
 * job is queued (Korean with 'fast', a runtime tier without the runtime) and the provenance.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { KilnError } from '../../../src/core/errors.js';
import { getTool } from '../../../src/tools/index.js';
import { validateRequest } from '../../../src/tools/run-tool.js';
import { tempDir } from '../../helpers/fixtures.js';
import { runMedia } from '../../helpers/media.js';
import { charAccuracy, installTestRuntime, paragraph, renderText } from '../../helpers/ocr.js';

const dir = tempDir('kiln-ocr-');
const dataDir = path.join(dir, 'data');
const bare = path.join(dir, 'bare');

const TEXT = [
  'The quick brown fox jumps over the lazy dog.',
  'Pack my box with five dozen liquor jugs, 1234567890.',
  'Sphinx of black quartz, judge my vow!',
  'How vexingly quick daft zebras jump (42%).',
];
const LEFT = ['Left column starts here', 'with several short lines', 'about kilns and glazes', 'ending the first column'];
const RIGHT = ['Right column follows it', 'speaking of clay bodies', 'and firing temperatures', 'closing the second one'];
const KOREAN = '안녕하세요 한국어 문장입니다';

type Data = {
  text: string;
  confidence: number;
  blocks: {
    text: string;
    confidence: number;
    box: { x: number; y: number; width: number; height: number };
    lines: {
      text: string;
      confidence: number;
      box: { x: number; y: number; width: number; height: number };
      angle?: number;
      words?: { text: string; box: { x: number; y: number; width: number; height: number } }[];
    }[];
  }[];
  provenance: Record<string, unknown>;
  enhance: { deskewDegrees: number };
  ms: number;
};

const ocr = async (file: string, settings: Record<string, unknown>, d = dataDir) =>
  (await runMedia(d, 'ocr', [file], settings)).data as unknown as Data;

function refusal(fn: () => unknown, code: string, reason?: string) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KilnError);
    assert.equal(e.code, code);
    if (reason) assert.equal(e.reason, reason);
    return true;
  });
}

describe('ocr', { timeout: 600_000 }, () => {
  let clean: string;
  let rotated: string;
  let columns: string;
  let korean: string;

  before(async () => {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(bare, { recursive: true });
    // Several fonts and sizes: a bold heading, sans, serif and monospace lines.
    clean = await renderText(path.join(dir, 'clean.png'), 1000, 330, [
      { text: TEXT[0]!, x: 30, y: 60, size: 34, font: 'DejaVu Sans', weight: 'bold' },
      { text: TEXT[1]!, x: 30, y: 130, size: 28, font: 'Liberation Serif' },
      { text: TEXT[2]!, x: 30, y: 200, size: 26, font: 'DejaVu Sans' },
      { text: TEXT[3]!, x: 30, y: 270, size: 24, font: 'Liberation Mono' },
    ]);
    rotated = await renderText(path.join(dir, 'rotated.png'), 1000, 330, paragraph(TEXT, { size: 28, font: 'Liberation Serif', y: 70 }), {
      rotate: 3,
      noise: true,
    });
    columns = await renderText(path.join(dir, 'columns.png'), 1000, 300, [
      ...paragraph(LEFT, { x: 30, y: 60, size: 24 }),
      ...paragraph(RIGHT, { x: 530, y: 60, size: 24 }),
    ]);
    korean = await renderText(path.join(dir, 'korean.png'), 640, 100, [{ text: KOREAN, x: 20, y: 62, size: 36, font: 'Noto Sans CJK KR' }]);
    await installTestRuntime(dataDir);
  });

  for (const quality of ['fast', 'balanced', 'best'] as const) {
    it(`reads clean English in several fonts and sizes at '${quality}' (≥ 95 %)`, async (t) => {
      const d = await ocr(clean, { quality });
      const acc = charAccuracy(TEXT.join('\n'), d.text);
      t.diagnostic(`${quality}: clean English character accuracy ${(acc * 100).toFixed(1)} % in ${d.ms} ms`);
      assert.ok(acc >= 0.95, `${quality} read ${JSON.stringify(d.text)} (${acc})`);
      assert.equal(d.provenance.actualQuality, quality);
      // The first line's box is where it was drawn (baseline 60, 34 px bold).
      const first = d.blocks[0]!.lines[0]!;
      assert.ok(Math.abs(first.box.x - 30) < 15 && first.box.y > 20 && first.box.y < 50, JSON.stringify(first.box));
      assert.ok(first.confidence > 0.5 && first.confidence <= 1);
    });

    it(`reads a rotated, noisy scan at '${quality}'`, async (t) => {
      const d = await ocr(rotated, { quality });
      const acc = charAccuracy(TEXT.join('\n'), d.text);
      t.diagnostic(
        `${quality}: rotated 3° noisy scan accuracy ${(acc * 100).toFixed(1)} % (deskew ${d.enhance.deskewDegrees}°) in ${d.ms} ms`,
      );
      assert.ok(acc >= 0.9, `${quality} read ${JSON.stringify(d.text)} (${acc})`);
      assert.ok(Math.abs(d.enhance.deskewDegrees - 3) < 0.8, `skew ${d.enhance.deskewDegrees}`);
      // Boxes are the input's: a line read levelled is turned back by the skew, so its box is the
      // box around the slanted line (the words at its ends inside it, not a level strip about its
      // centre), and it says the angle its text runs at.
      for (const l of d.blocks.flatMap((b) => b.lines)) {
        assert.ok(Math.abs((l.angle ?? 0) - d.enhance.deskewDegrees) < 0.11, `angle ${l.angle}`);
        if (l.box.width > 500) assert.ok(l.box.height > l.box.width * Math.sin((2.5 * Math.PI) / 180), JSON.stringify(l.box));
        for (const w of l.words ?? []) {
          const [a, b] = [l.box, w.box];
          assert.ok(
            b.x >= a.x - 1 && b.y >= a.y - 1 && b.x + b.width <= a.x + a.width + 1 && b.y + b.height <= a.y + a.height + 1,
            `${w.text} ${JSON.stringify(b)} outside ${JSON.stringify(a)}`,
          );
        }
      }
    });
  }

  // PP-OCR's recogniser reads horizontal lines only: a page scanned sideways read as "" with
  // confidence 0 at 'balanced' and 'best' (the default tier), where 'fast' (tesseract) read it.
  // 'fast' read such a page too (tesseract finds vertical lines) but said nothing of which way its text runs.
  for (const quality of ['fast', 'balanced', 'best'] as const) {
    it(`reads a page scanned sideways (turned 90° either way) at '${quality}', boxes in the input's pixels`, async () => {
      const sharp = (await import('sharp')).default;
      for (const deg of [90, 270] as const) {
        const file = path.join(dir, `sideways-${deg}.png`);
        await sharp(clean).rotate(deg).toFile(file);
        const d = (await ocr(file, { quality })) as Data & { orientation?: number };
        const acc = charAccuracy(TEXT.join('\n'), d.text);
        assert.ok(acc >= 0.95, `${quality} ${deg}° read ${JSON.stringify(d.text)} (${acc})`);
        assert.equal(d.orientation, 360 - deg);
        // The first line (drawn at x 30, y 20-50 of the 1000×330 page) runs down the right edge of the
        // 330×1000 picture turned clockwise, up the left edge of the one turned anticlockwise.
        const b = d.blocks[0]!.lines[0]!.box;
        assert.ok(b.height > 10 * b.width, JSON.stringify(b));
        // Its text runs down the page turned clockwise, up the other.
        assert.ok(Math.abs(d.blocks[0]!.lines[0]!.angle! - (deg === 90 ? 90 : -90)) < 1, `angle ${d.blocks[0]!.lines[0]!.angle}`);
        if (deg === 90) assert.ok(b.x > 240 && b.x + b.width < 335 && Math.abs(b.y - 30) < 15, JSON.stringify(b));
        else assert.ok(b.x < 40 && b.x + b.width > 50 && Math.abs(b.y + b.height - 970) < 15, JSON.stringify(b));
      }
    });
  }

  // 'fast' read an upside-down page as garbage ("‘pop Aze} au 4aAo sduunf xoj UMoug", confidence
  // 0.37): only 'best' had a 0°/180° classifier. A doubtful 'fast' reading now asks tesseract's
  // orientation detection (the osd pack).
  for (const quality of ['fast', 'best'] as const) {
    it(`reads a page scanned upside down at '${quality}' in its reading order`, async () => {
      const sharp = (await import('sharp')).default;
      const file = path.join(dir, 'upside-down.png');
      await sharp(clean).rotate(180).toFile(file);
      const d = (await ocr(file, { quality })) as Data & { orientation?: number };
      assert.ok(charAccuracy(TEXT.join('\n'), d.text) >= 0.95, JSON.stringify(d.text));
      assert.equal(d.orientation, 180);
      const b = d.blocks[0]!.lines[0]!.box;
      assert.ok(b.y > 240 && b.x + b.width > 900, JSON.stringify(b));
      assert.ok(Math.abs(Math.abs(d.blocks[0]!.lines[0]!.angle ?? 0) - 180) < 1, `angle ${d.blocks[0]!.lines[0]!.angle}`);
    });
  }

  for (const quality of ['fast', 'balanced'] as const) {
    it(`reads two columns column by column at '${quality}'`, async (t) => {
      const d = await ocr(columns, { quality });
      const acc = charAccuracy([...LEFT, ...RIGHT].join('\n'), d.text);
      t.diagnostic(`${quality}: two columns accuracy ${(acc * 100).toFixed(1)} %`);
      assert.ok(acc >= 0.9, d.text);
      assert.ok(d.text.indexOf('ending the first') < d.text.indexOf('Right column'), d.text);
      assert.ok(d.blocks.length >= 2);
    });
  }

  for (const quality of ['balanced', 'best'] as const) {
    it(`reads a clean Korean line exactly at '${quality}'`, async (t) => {
      const d = await ocr(korean, { quality, language: 'ko' });
      t.diagnostic(`${quality}: Korean read ${JSON.stringify(d.text)} in ${d.ms} ms`);
      assert.equal(d.text, KOREAN);
      assert.equal(d.provenance.engine, 'ppocr-v4-det+tesseract-kor');
    });
  }

  it("refuses Korean with 'fast' or engine tesseract before queueing", () => {
    const tool = getTool('ocr');
    const inputs = { files: [{ path: korean, name: 'k.png', size: 1 }], extra: {} };
    refusal(() => validateRequest(tool, inputs, { quality: 'fast', language: 'ko' }), 'FEATURE_INCOMPATIBLE', 'fast-korean-unsupported');
    refusal(
      () => validateRequest(tool, inputs, { engine: 'tesseract', language: 'ko' }),
      'FEATURE_INCOMPATIBLE',
      'fast-korean-unsupported',
    );
  });

  it('never falls back: a runtime tier without the runtime is FEATURE_NOT_INSTALLED; omitted quality picks the best available', async () => {
    const tool = getTool('ocr');
    const inputs = { files: [{ path: clean, name: 'c.png', size: 1 }], extra: {} };
    for (const s of [{ quality: 'balanced' }, { quality: 'best' }, { engine: 'paddleocr' }, { language: 'ko' }]) {
      await assert.rejects(
        tool.preflight!({ language: 'auto', ...s } as never, { dataDir: bare, inputs }),
        (e: KilnError) => e.code === 'FEATURE_NOT_INSTALLED',
      );
    }
    const plain = await ocr(clean, {}, bare);
    assert.equal(plain.provenance.actualQuality, 'fast');
    assert.equal(plain.provenance.requestedQuality, null);
    const kor = await ocr(korean, { language: 'ko' });
    assert.equal(kor.provenance.actualQuality, 'best');
    assert.equal(kor.text, KOREAN);
  });

  it('reports provenance: engine, qualities, device, provider, degraded, warnings, generation and model digests', async () => {
    const d = await ocr(clean, { engine: 'paddleocr' });
    const p = d.provenance;
    assert.equal(p.engine, 'ppocr-v4');
    assert.equal(p.requestedQuality, 'balanced');
    assert.equal(p.actualQuality, 'balanced');
    assert.equal(p.device, 'cpu');
    assert.equal(p.provider, 'CPUExecutionProvider');
    assert.equal(p.degraded, false);
    assert.match(String((p.warnings as string[])[0]), /deprecated/);
    assert.match(String(p.runtimeGeneration), /^0\.0\.1-test-/);
    assert.equal((p.models as { sha256: string }[]).length, 4);
    assert.ok((p.models as { sha256: string }[]).every((m) => /^[0-9a-f]{64}$/.test(m.sha256)));
  });
});
