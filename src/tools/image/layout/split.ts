import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { zipFiles } from '../../../core/zip.js';
import { getSharp, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';
import { checkAbort } from '../_shared/cancel.js';

const MAX_TILES = 10_000;

export default defineTool({
  id: 'split',
  section: 'image',
  group: 'layout',
  summary: 'Cut an image into grid tiles, rows, columns or fixed-size tiles.',
  description:
    'grid cuts rows × cols tiles, rows cuts horizontal strips, cols vertical strips. tileWidth and/or tileHeight cut fixed-size tiles ' +
    'instead (the last row/column keeps the remainder; a missing one means the full side). Always a ZIP of tiles in the input format, named <name>-r<row>-c<col>.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    mode: z
      .enum(['grid', 'rows', 'cols'])
      .default('grid')
      .describe('grid = rows x cols; rows = horizontal strips; cols = vertical strips.'),
    rows: z.int().min(1).max(100).default(3).describe('Number of rows.'),
    cols: z.int().min(1).max(100).default(3).describe('Number of columns.'),
    tileWidth: z.int().min(10).optional().describe('Fixed tile width in pixels; with tileHeight overrides rows/cols.'),
    tileHeight: z.int().min(10).optional().describe('Fixed tile height in pixels.'),
  }),
  output: 'ZIP of tiles',
  examples: [
    'poster.png --rows 2 --cols 2 -o tiles.zip',
    'panorama.jpg --mode cols --cols 3 -o carousel.zip',
    'map.png --tile-width 256 --tile-height 256 -o tiles.zip',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const img = await openInput(input, ctx.workDir, ctx.signal);
    const meta = await img.metadata();
    const rotated = (meta.orientation ?? 1) >= 5;
    const W = rotated ? meta.height! : meta.width!;
    const H = rotated ? meta.width! : meta.height!;
    let xs: number[];
    let ys: number[];
    if (s.tileWidth !== undefined || s.tileHeight !== undefined) {
      xs = steps(W, s.tileWidth ?? W);
      ys = steps(H, s.tileHeight ?? H);
    } else {
      const cols = s.mode === 'rows' ? 1 : s.cols;
      const rows = s.mode === 'cols' ? 1 : s.rows;
      if (cols > W || rows > H)
        throw new KilnError(
          'VALIDATION_ERROR',
          `A ${W}×${H} image cannot be cut into ${rows} rows × ${cols} columns of at least one pixel.`,
        );
      xs = even(W, cols);
      ys = even(H, rows);
    }
    const count = (xs.length - 1) * (ys.length - 1);
    if (count > MAX_TILES) throw new KilnError('LIMIT_EXCEEDED', `That would make ${count} tiles; at most ${MAX_TILES}.`);
    const upright = await img.autoOrient().toBuffer();
    const format = sameFormatAs(input.type?.ext);
    const ext = format;
    const sharp = await getSharp();
    const tiles: { path: string; name: string }[] = [];
    const stemName = path.basename(ctx.out(''));
    const tileDir = ctx.workDir;
    for (let r = 0; r < ys.length - 1; r++)
      for (let c = 0; c < xs.length - 1; c++) {
        checkAbort(ctx.signal);
        const name = `${stemName}-r${r + 1}-c${c + 1}.${ext}`;
        const p = path.join(tileDir, name);
        const tile = sharp(upright).extract({ left: xs[c]!, top: ys[r]!, width: xs[c + 1]! - xs[c]!, height: ys[r + 1]! - ys[r]! });
        await writeImage(tile, p, format, { quality: format === 'jpg' ? 92 : undefined });
        tiles.push({ path: p, name });
        ctx.progress((90 * tiles.length) / count, `tile ${tiles.length}/${count}`);
      }
    // A ZIP even for one tile, so callers always get the same shape.
    const zip = ctx.out('zip', '-tiles');
    await zipFiles(tiles, zip);
    return {
      outputs: [outputFile(zip)],
      data: { tiles: count, rows: ys.length - 1, cols: xs.length - 1, tileSizes: { widths: diffs(xs), heights: diffs(ys) }, format },
    };
  },
});

function even(total: number, n: number): number[] {
  return Array.from({ length: n + 1 }, (_, i) => Math.round((i * total) / n));
}

function steps(total: number, size: number): number[] {
  const out: number[] = [];
  for (let x = 0; x < total; x += size) out.push(x);
  out.push(total);
  return out;
}

function diffs(a: number[]): number[] {
  return a.slice(1).map((v, i) => v - a[i]!);
}
