import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, sameFormatAs, writeImage } from '../../../engines/sharp.js';
import { colorSchema, parseColor, svgPaint, type Rgba } from '../../_shared/color.js';
import { checkCanvas, loadUpright, roundCorners, shadowPng } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';
import { roundRect } from '../_shared/qr-svg.js';

export default defineTool({
  id: 'border',
  section: 'image',
  group: 'layout',
  summary: 'Add a solid, gradient or patterned border with padding, rounded corners and shadow.',
  description:
    'The border of `width` px goes around the image and an inner white mat of `padding` px. gradient runs diagonally from color to a ' +
    'lighter tint of it; pattern is diagonal stripes of color and that tint. borderRadius rounds the outer corners (inner ones follow). ' +
    'shadow adds a soft drop shadow. The result is PNG when corners or shadow need transparency, else the input format.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    width: z.number().min(0).max(2000).default(10).describe('Border thickness in pixels.'),
    color: colorSchema('#000000').describe('Border color (first color for gradient/pattern).'),
    style: z.enum(['solid', 'gradient', 'pattern']).default('solid').describe('Border fill style.'),
    borderRadius: z.number().min(0).max(2000).default(0).describe('Corner radius in pixels.'),
    padding: z.number().min(0).max(200).default(0).describe('Space between image and border in pixels.'),
    shadow: z.boolean().default(false).describe('Drop shadow.'),
  }),
  output: 'image (PNG when rounded corners or shadow need alpha, else the input format)',
  examples: [
    'photo.jpg --width 20 --color "#222222" -o framed.jpg',
    'photo.jpg --style gradient --color "#ff6600" --border-radius 24 --shadow -o framed.png',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const src = await loadUpright(input, ctx.workDir);
    const sharp = await getSharp();
    const bw = Math.round(s.width);
    const pad = Math.round(s.padding);
    const W = src.width + 2 * (bw + pad);
    const H = src.height + 2 * (bw + pad);
    checkCanvas(W, H);
    const rOuter = Math.min(s.borderRadius, W / 2, H / 2);
    const rMat = Math.max(0, rOuter - bw);
    const rImg = Math.max(0, rMat - pad);
    const c = parseColor(s.color);
    const tint = mix(c, { r: 255, g: 255, b: 255, alpha: c.alpha }, 0.55);
    let defs = '';
    let paint = svgPaint(c);
    if (s.style === 'gradient') {
      defs = `<linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" ${svgPaint(c, 'stop-color')}/><stop offset="1" ${svgPaint(tint, 'stop-color')}/></linearGradient>`;
      paint = 'fill="url(#g)"';
    } else if (s.style === 'pattern') {
      const p = Math.max(4, Math.round(Math.max(bw, 8) / 2));
      defs = `<pattern id="p" width="${p * 2}" height="${p * 2}" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="${p * 2}" height="${p * 2}" ${svgPaint(tint)}/><rect width="${p}" height="${p * 2}" ${svgPaint(c)}/></pattern>`;
      paint = 'fill="url(#p)"';
    }
    // Border ring (outer shape minus the mat) plus the white mat; the image goes on top.
    const ring = `<path fill-rule="evenodd" ${paint} d="${roundRect(0, 0, W, H, rOuter)} ${bw > 0 ? roundRect(bw, bw, W - 2 * bw, H - 2 * bw, rMat) : ''}"/>`;
    const mat = pad > 0 ? `<path fill="#ffffff" d="${roundRect(bw, bw, W - 2 * bw, H - 2 * bw, rMat)}"/>` : '';
    const frameSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><defs>${defs}</defs>${bw > 0 ? ring : ''}${mat}</svg>`;
    const photo = await roundCorners(src.buffer, src.width, src.height, rImg);
    let framed = await sharp(Buffer.from(frameSvg))
      .composite([{ input: photo, left: bw + pad, top: bw + pad }])
      .png()
      .toBuffer();
    let outW = W;
    let outH = H;
    let shift = 0;
    if (s.shadow) {
      const blur = Math.max(4, Math.round(Math.min(W, H) * 0.02));
      const offset = Math.round(blur / 2);
      const { png, pad: sp } = await shadowPng(W, H, rOuter, blur, 0.45);
      shift = sp;
      outW = W + 2 * sp + offset;
      outH = H + 2 * sp + offset;
      checkCanvas(outW, outH);
      framed = await sharp({ create: { width: outW, height: outH, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
        .composite([
          { input: png, left: offset, top: offset },
          { input: framed, left: sp, top: sp },
        ])
        .png()
        .toBuffer();
    }
    const needsAlpha = s.shadow || rOuter > 0 || src.hasAlpha || c.alpha < 1;
    const format = needsAlpha ? 'png' : sameFormatAs(input.type?.ext);
    const out = ctx.out(format, '-border');
    // The frame is drawn on an RGBA canvas: an input without alpha framed opaquely (square corners, no
    // shadow, an opaque colour) is written without it.
    await writeImage(sharp(framed), out, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: !src.hasAlpha });
    return {
      outputs: [outputFile(out)],
      data: { width: outW, height: outH, imageOffset: { left: shift + bw + pad, top: shift + bw + pad }, format },
    };
  },
});

function mix(a: Rgba, b: Rgba, t: number): Rgba {
  return {
    r: Math.round(a.r + (b.r - a.r) * t),
    g: Math.round(a.g + (b.g - a.g) * t),
    b: Math.round(a.b + (b.b - a.b) * t),
    alpha: a.alpha,
  };
}
