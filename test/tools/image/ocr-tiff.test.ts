/**
 * ocr of a multi-page TIFF (a scan, a fax): every page is read, as tesseract does; only the first
 * was read before and the others were dropped without a word. Built-in 'fast' tier, no bundle.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { runMedia } from '../../helpers/media.js';
import { renderText } from '../../helpers/ocr.js';

const dir = tempDir('kiln-ocr-tiff-');

async function tiff(name: string, pages: Buffer[]): Promise<string> {
  const file = path.join(dir, name);
  await sharp(pages, { join: { animated: true } })
    .tiff()
    .toFile(file);
  return file;
}

async function page(text: string): Promise<Buffer> {
  const file = await renderText(path.join(dir, `${text}.png`), 420, 110, [{ text, x: 20, y: 70, size: 44 }]);
  return sharp(file).png().toBuffer();
}

describe('ocr of a multi-page TIFF', { timeout: 120_000 }, () => {
  it('reads every page: the text of all, each page in pages[]', async () => {
    const file = await tiff('two.tif', [await page('PAGE ONE'), await page('PAGE TWO')]);
    const d = (await runMedia(dir, 'ocr', [file], { quality: 'fast' })).data as {
      text: string;
      pageCount: number;
      pages: { page: number; text: string; width: number }[];
      width: number;
    };
    assert.equal(d.pageCount, 2);
    assert.deepEqual(
      d.pages.map((p) => [p.page, p.text.trim()]),
      [
        [1, 'PAGE ONE'],
        [2, 'PAGE TWO'],
      ],
    );
    assert.match(d.text, /PAGE ONE[\s\S]*\f[\s\S]*PAGE TWO/);
    assert.equal(d.width, 420);
  });

  it('refuses more than 50 pages with LIMIT_EXCEEDED before reading any', async () => {
    const blank = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    const file = await tiff(
      'many.tif',
      Array.from({ length: 51 }, () => blank),
    );
    await assert.rejects(runMedia(dir, 'ocr', [file], { quality: 'fast' }), (e: KilnError) => {
      assert.equal(e.code, 'LIMIT_EXCEEDED');
      assert.equal(e.reason, 'too-many-pages');
      assert.match(e.message, /51/);
      return true;
    });
  });
});
