import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, withoutUnusedAlpha } from '../../../engines/sharp.js';
import { colorSchema, parseColor, svgPaint } from '../../_shared/color.js';
import { FRAMES, layoutFrame } from '../_shared/device-frames.js';
import { checkCanvas, loadUpright, roundCorners } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';
import { xmlEscape } from '../_shared/xml.js';

const SOCIAL: Record<string, { width: number; height: number }> = {
  twitter: { width: 1600, height: 900 },
  linkedin: { width: 1200, height: 627 },
  'instagram-square': { width: 1080, height: 1080 },
  'instagram-story': { width: 1080, height: 1920 },
  facebook: { width: 1200, height: 630 },
  producthunt: { width: 1270, height: 760 },
};

/** blur and opacity as fractions of the framed image's shorter side; y offset likewise. */
const SHADOWS = {
  none: undefined,
  subtle: { blur: 0.015, opacity: 0.25, dy: 0.008 },
  medium: { blur: 0.03, opacity: 0.4, dy: 0.02 },
  dramatic: { blur: 0.06, opacity: 0.6, dy: 0.045 },
} as const;

const stop = z.object({ color: colorSchema(), position: z.number().min(0).max(100) });

export default defineTool({
  id: 'beautify',
  section: 'image',
  group: 'layout',
  summary: 'Present a screenshot on a gradient or image background with padding, shadow, device/window frame and social sizing.',
  description:
    'Puts the screenshot, with rounded corners and a shadow, on a background (solid = the first gradient stop; linear-gradient at 135°; ' +
    'radial-gradient from the centre; an uploaded backgroundImage; or transparent). frame draws a macOS, Windows or browser window, or an ' +
    'iPhone, MacBook or iPad around it. socialPreset fixes the canvas size (twitter 1600×900, linkedin 1200×627, instagram-square 1080×1080, ' +
    'instagram-story 1080×1920, facebook 1200×630, producthunt 1270×760) and fits the screenshot inside the padding.',
  input: {
    kind: 'file',
    accept: ['image/*'],
    extra: [
      {
        field: 'backgroundImage',
        flag: 'background-image',
        accept: ['image/*'],
        required: false,
        description: 'Background image when backgroundType is image',
      },
    ],
  },
  frames: 'first',
  settings: z.object({
    backgroundType: z
      .enum(['solid', 'linear-gradient', 'radial-gradient', 'image', 'transparent'])
      .default('linear-gradient')
      .describe('Background type.'),
    gradientStops: z
      .array(stop)
      .min(2)
      .max(16)
      .default([
        { color: '#667eea', position: 0 },
        { color: '#764ba2', position: 100 },
      ])
      .describe('Gradient stops [{color, position 0-100}]; solid uses the first color.'),
    padding: z.number().min(0).max(256).default(64).describe('Space around the screenshot in pixels.'),
    borderRadius: z.number().min(0).max(64).default(12).describe('Corner radius of the screenshot in pixels.'),
    shadowPreset: z.enum(['none', 'subtle', 'medium', 'dramatic']).default('subtle').describe('Shadow preset.'),
    frame: z.enum(FRAMES).default('none').describe('Window/device frame.'),
    socialPreset: z
      .enum(['none', 'twitter', 'linkedin', 'instagram-square', 'instagram-story', 'facebook', 'producthunt'])
      .default('none')
      .describe('Resize to a social size.'),
    watermarkText: z.string().max(200).optional().describe('Optional watermark text (bottom right).'),
    outputFormat: z.enum(['png', 'jpeg', 'webp']).default('png').describe('Output format.'),
  }),
  output: 'PNG, JPEG or WebP image',
  examples: [
    'shot.png -o pretty.png',
    'shot.png --frame macos-dark --shadow-preset dramatic --social-preset twitter -o tweet.png',
    'shot.png --background-type image --background-image bg.jpg -o out.png',
  ],
  async run(ctx, { files, extra }, s) {
    const bgFile = extra.backgroundImage?.[0];
    if (s.backgroundType === 'image' && !bgFile)
      throw new KilnError('VALIDATION_ERROR', 'backgroundType image needs a backgroundImage file (CLI --background-image).');
    const sharp = await getSharp();
    const shot = await loadUpright(files[0]!, ctx.workDir);

    // 1. The screenshot inside its frame, corners cut.
    const fl = layoutFrame(s.frame, shot.width, shot.height, s.frame === 'none' ? s.borderRadius : Math.max(s.borderRadius, 6));
    checkCanvas(fl.width, fl.height);
    const screen = await roundCorners(shot.buffer, shot.width, shot.height, fl.screen.radius);
    const layers: { input: Buffer; left: number; top: number }[] = [{ input: screen, left: fl.screen.left, top: fl.screen.top }];
    if (fl.overlaySvg) layers.push({ input: Buffer.from(fl.overlaySvg), left: fl.screen.left, top: fl.screen.top });
    let framed: Buffer = await sharp(Buffer.from(fl.svg)).composite(layers).png().toBuffer();
    framed = await roundCorners(framed, fl.width, fl.height, fl.outerRadius);
    ctx.progress(40, 'framing');

    // 2. Canvas size: padding around, or a social size with the framed image fitted inside the padding.
    const pad = Math.round(s.padding);
    let fw = fl.width;
    let fh = fl.height;
    let W = fw + 2 * pad;
    let H = fh + 2 * pad;
    const social = s.socialPreset === 'none' ? undefined : SOCIAL[s.socialPreset]!;
    if (social) {
      W = social.width;
      H = social.height;
      const k = Math.min((W - 2 * pad) / fw, (H - 2 * pad) / fh);
      if (!(k > 0)) throw new KilnError('VALIDATION_ERROR', `padding ${pad} leaves no room on a ${W}×${H} ${s.socialPreset} canvas.`);
      fw = Math.max(1, Math.round(fw * k));
      fh = Math.max(1, Math.round(fh * k));
      framed = await sharp(framed).resize(fw, fh, { fit: 'fill' }).png().toBuffer();
    }
    checkCanvas(W, H);
    const left = Math.round((W - fw) / 2);
    const top = Math.round((H - fh) / 2);

    // 3. Background.
    let canvas;
    const stops = [...s.gradientStops].sort((a, b) => a.position - b.position);
    if (s.backgroundType === 'image') {
      const bg = await loadUpright(bgFile!, ctx.workDir);
      canvas = sharp(await sharp(bg.buffer).resize(W, H, { fit: 'cover' }).ensureAlpha().png().toBuffer());
    } else if (s.backgroundType === 'transparent') {
      canvas = sharp({ create: { width: W, height: H, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } });
    } else if (s.backgroundType === 'solid') {
      canvas = sharp({ create: { width: W, height: H, channels: 4, background: parseColor(stops[0]!.color) } });
    } else {
      const stopTags = stops.map((st) => `<stop offset="${st.position / 100}" ${svgPaint(st.color, 'stop-color')}/>`).join('');
      const grad =
        s.backgroundType === 'linear-gradient'
          ? `<linearGradient id="g" x1="0" y1="0" x2="1" y2="1">${stopTags}</linearGradient>`
          : `<radialGradient id="g" cx="0.5" cy="0.5" r="0.75">${stopTags}</radialGradient>`;
      canvas = sharp(
        Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><defs>${grad}</defs><rect width="${W}" height="${H}" fill="url(#g)"/></svg>`,
        ),
      );
    }

    // 4. Shadow from the framed image's own alpha, so device outlines cast the right shape.
    const top2: { input: Buffer; left: number; top: number }[] = [];
    const sh = SHADOWS[s.shadowPreset];
    if (sh) {
      const m = Math.min(fw, fh);
      const blur = Math.max(1, sh.blur * m);
      const ext = Math.ceil(blur * 2);
      const shadow = await sharp(framed)
        .ensureAlpha()
        .linear([0, 0, 0, sh.opacity], [0, 0, 0, 0])
        .extend({ top: ext, bottom: ext, left: ext, right: ext, background: { r: 0, g: 0, b: 0, alpha: 0 } })
        .blur(blur)
        .png()
        .toBuffer();
      // The shadow may hang over the canvas edge; crop it to the canvas.
      const sl = left - ext;
      const st = top - ext + Math.round(sh.dy * m);
      const cropL = Math.max(0, -sl);
      const cropT = Math.max(0, -st);
      const sw = Math.min(fw + 2 * ext - cropL, W - Math.max(0, sl));
      const shh = Math.min(fh + 2 * ext - cropT, H - Math.max(0, st));
      if (sw > 0 && shh > 0) {
        top2.push({
          input: await sharp(shadow).extract({ left: cropL, top: cropT, width: sw, height: shh }).png().toBuffer(),
          left: Math.max(0, sl),
          top: Math.max(0, st),
        });
      }
    }
    top2.push({ input: framed, left, top });
    if (s.watermarkText) {
      const size = Math.max(12, Math.round(H * 0.025));
      const m = Math.round(size * 0.8);
      top2.push({
        input: Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="${W - m}" y="${H - m}" text-anchor="end" font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="#ffffff" fill-opacity="0.8" stroke="#000000" stroke-opacity="0.25" stroke-width="${Math.max(1, size / 24)}" paint-order="stroke">${xmlEscape(s.watermarkText)}</text></svg>`,
        ),
        left: 0,
        top: 0,
      });
    }
    ctx.progress(70, 'composing');
    // Without shadow or rounded corners on a solid background nothing is transparent: no alpha channel then.
    let img = await withoutUnusedAlpha(sharp(await canvas.composite(top2).png().toBuffer()));
    const ext = s.outputFormat === 'jpeg' ? 'jpg' : s.outputFormat;
    if (s.outputFormat === 'jpeg') img = img.flatten({ background: '#ffffff' }).jpeg({ quality: 92, mozjpeg: true });
    else if (s.outputFormat === 'webp') img = img.webp({ quality: 90 });
    else img = img.png();
    const out = ctx.out(ext, '-beautified');
    await img.toFile(out);
    return {
      outputs: [outputFile(out)],
      data: {
        width: W,
        height: H,
        screenshot: { left: left + Math.round((fl.screen.left * fw) / fl.width), top: top + Math.round((fl.screen.top * fh) / fl.height) },
      },
    };
  },
});
