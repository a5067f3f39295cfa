import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, writeImage } from '../../../engines/sharp.js';
import { outputFormat, readRgba } from '../_shared/pixels.js';
import { layerInput, clipLayer } from '../_shared/layer.js';
import { renderText } from '../_shared/text.js';
import { colorSchema, parseColor, svgPaint } from '../../_shared/color.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'text-overlay',
  section: 'image',
  group: 'watermark',
  summary: 'Draw styled text at a position, optionally on a padded rounded background box.',
  description:
    'Text is laid out by Pango with the installed fonts (fontconfig names such as "DejaVu Sans", "Liberation Serif", "Noto Sans"; generic "sans-serif"/"serif"/"monospace" work too) and wraps to fit the image. ' +
    'x/y are the top-left of the text block (with its box); omitted x centers it, omitted y places it near the bottom.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    text: z.string().min(1).max(500).describe('Text to draw.'),
    font: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[\w .,'-]+$/, "letters, digits, spaces and . , ' - only")
      .default('sans-serif')
      .describe('Font family name from the installed fonts.'),
    fontSize: z.number().min(8).max(200).default(48).describe('Font size in px.'),
    color: colorSchema('#FFFFFF').describe('Text color.'),
    x: z.number().min(0).optional().describe('Left edge of the text block in px; horizontally centered when omitted.'),
    y: z.number().min(0).optional().describe('Top edge of the text block in px; placed near the bottom when omitted.'),
    background: colorSchema()
      .optional()
      .describe('Background box color behind the text (8-digit hex or rgba() for alpha); no box when omitted or none.'),
    padding: z.number().min(0).max(200).default(8).describe('Padding inside the background box in px.'),
    borderRadius: z.number().min(0).max(100).default(0).describe('Corner radius of the background box in px.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --text "Hello" --font-size 64 --background "#00000099" --padding 16 --border-radius 12'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const { data, ...info } = await readRgba(input, ctx.workDir);
    const W = info.width;
    const H = info.height;
    // A fully transparent box ("none", "transparent", #0000) is no box, as when background is omitted.
    const boxColor = s.background !== undefined && parseColor(s.background).alpha > 0 ? s.background : undefined;
    const pad = boxColor ? s.padding : 0;
    const margin = Math.round(Math.min(W, H) * 0.04);
    // Wrap inside what is left of the image right of x (or inside the margins when centered).
    const wrapWidth = Math.max(s.fontSize, (s.x === undefined ? W - 2 * margin : W - s.x) - 2 * pad);
    const text = await renderText({
      text: s.text,
      family: s.font.replace(/,/g, ' '),
      size: s.fontSize,
      width: wrapWidth,
      align: s.x === undefined ? 'center' : 'left',
      color: s.color,
    });
    const boxW = text.width + 2 * pad;
    const boxH = text.height + 2 * pad;
    const x = Math.round(s.x ?? Math.max(0, (W - boxW) / 2));
    const y = Math.round(s.y ?? Math.max(0, H - boxH - margin));
    const layers = [];
    const sharp = await getSharp();
    if (boxColor) {
      const r = Math.min(s.borderRadius, boxW / 2, boxH / 2);
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${boxW}" height="${boxH}"><rect width="${boxW}" height="${boxH}" rx="${r}" ry="${r}" ${svgPaint(boxColor)}/></svg>`;
      const { data: bd, info: bi } = await sharp(Buffer.from(svg)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      const box = clipLayer(
        { data: new Uint8ClampedArray(bd.buffer, bd.byteOffset, bd.length), width: bi.width, height: bi.height },
        x,
        y,
        W,
        H,
      );
      if (box) layers.push(layerInput(box));
    }
    const clipped = clipLayer(text, x + pad, y + pad, W, H);
    if (clipped) layers.push(layerInput(clipped));
    const img = sharp(data, { raw: { width: W, height: H, channels: 4 } }).composite(layers);
    const format = outputFormat(input);
    const out = ctx.out(format);
    // Worked on as RGBA: the result of an input without alpha is written without it when nothing became transparent.
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: !info.hadAlpha });
    return {
      outputs: [outputFile(out)],
      data: { box: { left: x, top: y, width: boxW, height: boxH }, clipped: x + boxW > W || y + boxH > H },
    };
  },
});
