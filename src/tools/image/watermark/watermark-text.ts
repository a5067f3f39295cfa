import type { OverlayOptions } from 'sharp';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { fontFile } from '../../../engines/fonts.js';
import { getSharp, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';
import { colorSchema, hexOf, parseColor } from '../../_shared/color.js';

export default defineTool({
  id: 'watermark-text',
  section: 'image',
  group: 'watermark',
  summary: 'Stamp a text watermark, once or tiled, with font, color, opacity and rotation.',
  description:
    'The text is laid out by Pango with a real font file (font: a family such as "DejaVu Sans", "Liberation Serif", "Noto Sans", or sans-serif, serif, monospace), ' +
    'fontSize in pixels, color (its alpha multiplies opacity), opacity 0-100 %, rotated by rotation degrees, and composited at position with a margin of half the font size, ' +
    'or repeated in a grid over the whole image when tile is on. Text larger than the image is scaled down to fit. ' +
    'Animated GIF/WebP input gives a still image of the first frame.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    text: z.string().min(1).max(500).describe('Watermark text.'),
    font: z.string().default('sans-serif').describe("Font family name from the server's installed fonts."),
    fontSize: z.number().min(8).max(1000).default(48).describe('Font size in pixels.'),
    color: colorSchema('#000000').describe('Text color.'),
    opacity: z.number().min(0).max(100).default(50).describe('Text opacity in percent.'),
    position: z
      .enum(['center', 'top-left', 'top-right', 'bottom-left', 'bottom-right'])
      .default('center')
      .describe('Placement (ignored when tile is true).'),
    rotation: z.number().min(-360).max(360).default(0).describe('Text rotation in degrees.'),
    tile: z.boolean().default(false).describe('Repeat the text across the whole image.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --text "© Ann 2026"', 'photo.jpg --text DRAFT --tile --rotation -30 --opacity 20 --font-size 36'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    const sharp = await getSharp();
    const font = fontFile(s.font);
    const img = await openInput(input, ctx.workDir, ctx.signal);
    // Bake the orientation in now: the overlay is placed on the picture as a person sees it.
    const px = await img.autoOrient().raw().toBuffer({ resolveWithObject: true });
    const W = px.info.width;
    const H = px.info.height;
    const base = sharp(px.data, { raw: { width: W, height: H, channels: px.info.channels } });
    ctx.progress(20, 'rendering text');

    const markup = `<span foreground="${hexOf(s.color)}">${escapeMarkup(s.text)}</span>`;
    // Pango sizes are points; at 72 dpi one point is one pixel.
    const margin = Math.round(s.fontSize / 2);
    // Long text wraps at the image width instead of growing one huge line (memory, and it would be shrunk anyway).
    const wrapAt = Math.max(s.fontSize * 2, s.tile ? W : W - 2 * margin);
    let text = sharp({
      text: {
        text: markup,
        font: `${font.family} ${s.fontSize}px`,
        fontfile: font.file,
        dpi: 72,
        rgba: true,
        align: 'centre',
        width: wrapAt,
        wrap: 'word-char',
      },
    });
    if (s.rotation % 360 !== 0) {
      text = sharp(await text.png().toBuffer()).rotate(s.rotation, { background: { r: 0, g: 0, b: 0, alpha: 0 } });
    }
    const { data, info } = await text.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    // Pango takes the colour as #rrggbb; the colour's own alpha (#rrggbbaa, rgba()) scales the opacity.
    const alpha = (s.opacity / 100) * parseColor(s.color).alpha;
    for (let i = 3; i < data.length; i += 4) data[i] = Math.round(data[i]! * alpha);
    let stamp = await sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } })
      .png()
      .toBuffer();
    let sw = info.width;
    let sh = info.height;
    const room = s.tile ? { w: W, h: H } : { w: Math.max(1, W - 2 * margin), h: Math.max(1, H - 2 * margin) };
    if (sw > room.w || sh > room.h) {
      const k = Math.min(room.w / sw, room.h / sh);
      sw = Math.max(1, Math.floor(sw * k));
      sh = Math.max(1, Math.floor(sh * k));
      stamp = await sharp(stamp).resize(sw, sh, { fit: 'fill' }).png().toBuffer();
    }
    if (sw < 1 || sh < 1) throw new KilnError('VALIDATION_ERROR', 'The text renders empty.');

    let layers: OverlayOptions[];
    if (s.tile) {
      // A cell with space around the text, repeated by libvips over the whole canvas.
      const gapX = Math.max(margin * 2, Math.round(sw * 0.5));
      const gapY = Math.max(margin * 2, Math.round(sh * 1.5));
      const cellW = Math.min(W, sw + gapX);
      const cellH = Math.min(H, sh + gapY);
      const cell = await sharp({ create: { width: cellW, height: cellH, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
        .composite([{ input: stamp, left: Math.floor((cellW - sw) / 2), top: Math.floor((cellH - sh) / 2) }])
        .png()
        .toBuffer();
      layers = [{ input: cell, tile: true, left: 0, top: 0 }];
    } else {
      const left = s.position === 'center' ? Math.round((W - sw) / 2) : s.position.endsWith('left') ? margin : W - margin - sw;
      const top = s.position === 'center' ? Math.round((H - sh) / 2) : s.position.startsWith('top') ? margin : H - margin - sh;
      layers = [{ input: stamp, left: Math.max(0, left), top: Math.max(0, top) }];
    }
    ctx.progress(60, 'compositing');
    const format = sameFormatAs(ext);
    const out = ctx.out(format);
    base.composite(layers);
    // The text layer is RGBA: an input without alpha is written without it when nothing became transparent.
    const hadAlpha = px.info.channels === 2 || px.info.channels === 4;
    await writeImage(base, out, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: !hadAlpha });
    return { outputs: [outputFile(out)], data: { font: font.family, fontFile: font.file, textWidth: sw, textHeight: sh } };
  },
});

function escapeMarkup(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}
