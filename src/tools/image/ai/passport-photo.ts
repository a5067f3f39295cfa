/**
 * Passport/ID photo in two phases. analyze: face landmarks (68 points) of the largest face, the
 * estimated chin and crown, a preview. generate: background removed onto bgColor, scaled so chin to
 * crown matches the country's rule at dpi, placed at the rule's eye line (or with the crown at 10 %
 * of the height), optional print sheet; JPEG quality searched down to maxFileSizeKb. The CLI and the
 * plain tool route run both phases at once; the daemon's analyze/generate routes split them.
 */
import { outputFile } from '../../_shared/output.js';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool, type OutputFile, type RunContext } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { composite, matte, type Picture, readPicture, solidBackground } from './_background.js';
import { documentTypesOf, findRule, type PhotoRule, RULE_COUNTRIES } from './passport-rules.js';

export interface Pt {
  x: number;
  y: number;
}

/** What analyze returns as `landmarks` and generate takes back (image pixels). */
export interface PortraitLandmarks {
  points: Pt[];
  box: { x: number; y: number; width: number; height: number };
  score: number;
  eyes: { left: Pt; right: Pt };
  chin: Pt;
  crown: Pt;
  /** How the crown was found: the top of the subject's matte, or eye-to-chin proportion. */
  crownFrom: 'matte' | 'proportion';
  faces: number;
}

const mean = (ps: Pt[]): Pt => ({ x: ps.reduce((s, p) => s + p.x, 0) / ps.length, y: ps.reduce((s, p) => s + p.y, 0) / ps.length });

/**
 * Landmarks of the largest face. The crown is not a landmark: in adults the eye line sits about
 * half-way between chin and crown, so the crown is first put one eye-to-chin distance above the eyes;
 * when the matte's top edge above the face lies near that, it is the better estimate (real head shape).
 */
export async function portraitLandmarks(
  p: Picture,
  alpha: Float32Array | undefined,
  ctx: Pick<RunContext, 'dataDir' | 'signal'>,
): Promise<PortraitLandmarks> {
  const { detectFaces } = await import('../../../ai/tasks/faces.js');
  const faces = await detectFaces(
    { width: p.width, height: p.height, rgb: new Uint8Array(p.rgb) },
    { minConfidence: 0.5 },
    { dataDir: ctx.dataDir, signal: ctx.signal },
  );
  if (!faces.length)
    throw new KilnError('UNSUPPORTED_INPUT', 'No face was found in the photo: use a front-facing portrait with the whole head visible.');
  const face = [...faces].sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]!;
  const pts = face.landmarks;
  const left = mean(pts.slice(36, 42));
  const right = mean(pts.slice(42, 48));
  const eye = mean([left, right]);
  const chin = pts[8]!;
  const span = chin.y - eye.y;
  let crown: Pt = { x: eye.x, y: eye.y - span };
  let crownFrom: PortraitLandmarks['crownFrom'] = 'proportion';
  if (alpha) {
    const half = Math.max(2, Math.abs(right.x - left.x) / 2);
    const x0 = Math.max(0, Math.round(eye.x - half));
    const x1 = Math.min(p.width - 1, Math.round(eye.x + half));
    const brow = Math.min(...pts.slice(17, 27).map((q) => q.y));
    for (let y = Math.max(0, Math.round(eye.y - 2 * span)); y < brow; y++) {
      let on = 0;
      for (let x = x0; x <= x1; x++) if (alpha[y * p.width + x]! > 0.5) on++;
      if (on > (x1 - x0 + 1) / 2) {
        if (Math.abs(y - crown.y) < 0.35 * span) {
          crown = { x: eye.x, y };
          crownFrom = 'matte';
        }
        break;
      }
    }
  }
  return { points: pts, box: face.box, score: face.score, eyes: { left, right }, chin, crown, crownFrom, faces: faces.length };
}

const PT = z.object({ x: z.number(), y: z.number() });
const LANDMARKS = z.object({ points: z.array(PT).optional(), eyes: z.object({ left: PT, right: PT }), chin: PT, crown: PT }).passthrough();

const SHEETS: Record<string, { widthMm: number; heightMm: number }> = {
  '4x6': { widthMm: 152.4, heightMm: 101.6 },
  a4: { widthMm: 210, heightMm: 297 },
  letter: { widthMm: 215.9, heightMm: 279.4 },
};

function ruleFor(countryCode: string, documentType: string): PhotoRule {
  const rule = findRule(countryCode, documentType);
  if (rule) return rule;
  const types = documentTypesOf(countryCode);
  throw new KilnError(
    'VALIDATION_ERROR',
    types.length
      ? `countryCode ${countryCode}: no ${documentType} rule; document types: ${types.join(', ')}.`
      : `countryCode ${countryCode}: no rule; countries: ${RULE_COUNTRIES.join(', ')}.`,
    { details: [{ path: types.length ? 'documentType' : 'countryCode', message: 'no rule' }] },
  );
}

const mmToPx = (mm: number, dpi: number) => Math.round((mm / 25.4) * dpi);

async function encodeJpeg(img: Buffer, w: number, h: number, dpi: number, quality: number): Promise<Buffer> {
  const sharp = await getSharp();
  return sharp(img, { raw: { width: w, height: h, channels: 3 } })
    .withMetadata({ density: dpi })
    .jpeg({ quality, chromaSubsampling: quality >= 90 ? '4:4:4' : '4:2:0' })
    .toBuffer();
}

/** Highest JPEG quality (95 down to 10) whose file fits maxKb; 0 = no limit (quality 95). */
async function fitJpeg(img: Buffer, w: number, h: number, dpi: number, maxKb: number): Promise<{ data: Buffer; quality: number }> {
  const best = await encodeJpeg(img, w, h, dpi, 95);
  if (!maxKb || best.length <= maxKb * 1024) return { data: best, quality: 95 };
  let lo = 10;
  let hi = 94;
  let found: { data: Buffer; quality: number } | undefined;
  while (lo <= hi) {
    const q = (lo + hi) >> 1;
    const data = await encodeJpeg(img, w, h, dpi, q);
    if (data.length <= maxKb * 1024) {
      found = { data, quality: q };
      lo = q + 1;
    } else hi = q - 1;
  }
  if (!found) {
    const min = await encodeJpeg(img, w, h, dpi, 10);
    throw new KilnError(
      'VALIDATION_ERROR',
      `maxFileSizeKb ${maxKb}: a ${w}×${h} px photo is ${Math.ceil(min.length / 1024)} KB even at JPEG quality 10; raise maxFileSizeKb or lower dpi.`,
      { details: [{ path: 'maxFileSizeKb', message: `at least ${Math.ceil(min.length / 1024)} at dpi ${dpi}` }] },
    );
  }
  return found;
}

/** Copies of the photo tiled on a sheet with 5 mm page margins and 2 mm cut gaps, grey cut marks. */
async function printSheet(
  photo: Buffer,
  pw: number,
  ph: number,
  sheetName: string,
  dpi: number,
): Promise<{ data: Buffer; copies: number }> {
  const sharp = await getSharp();
  const sheet = SHEETS[sheetName]!;
  const margin = mmToPx(5, dpi);
  const gap = mmToPx(2, dpi);
  const fit = (W: number, H: number) => ({
    cols: Math.max(0, Math.floor((W - 2 * margin + gap) / (pw + gap))),
    rows: Math.max(0, Math.floor((H - 2 * margin + gap) / (ph + gap))),
  });
  const a = { W: mmToPx(sheet.widthMm, dpi), H: mmToPx(sheet.heightMm, dpi) };
  const b = { W: a.H, H: a.W };
  const fa = fit(a.W, a.H);
  const fb = fit(b.W, b.H);
  const [S, f] = fa.cols * fa.rows >= fb.cols * fb.rows ? [a, fa] : [b, fb];
  if (!f.cols || !f.rows) throw new KilnError('VALIDATION_ERROR', `printLayout ${sheetName}: the photo does not fit on the sheet.`);
  const layers: { input: Buffer; left: number; top: number }[] = [];
  const line = Math.max(1, Math.round(dpi / 300));
  const ox = Math.round((S.W - (f.cols * pw + (f.cols - 1) * gap)) / 2);
  const oy = Math.round((S.H - (f.rows * ph + (f.rows - 1) * gap)) / 2);
  const mark = async (w: number, h: number) =>
    sharp({ create: { width: w, height: h, channels: 3, background: '#b0b0b0' } })
      .png()
      .toBuffer();
  for (let r = 0; r < f.rows; r++)
    for (let c = 0; c < f.cols; c++) {
      const left = ox + c * (pw + gap);
      const top = oy + r * (ph + gap);
      // Cut outlines just outside each copy, inside the gap.
      layers.push({ input: await mark(pw + 2 * line, line), left: left - line, top: top - line });
      layers.push({ input: await mark(pw + 2 * line, line), left: left - line, top: top + ph });
      layers.push({ input: await mark(line, ph), left: left - line, top });
      layers.push({ input: await mark(line, ph), left: left + pw, top });
      layers.push({ input: photo, left, top });
    }
  const data = await sharp({ create: { width: S.W, height: S.H, channels: 3, background: '#ffffff' } })
    .composite(layers)
    .withMetadata({ density: dpi })
    .jpeg({ quality: 95 })
    .toBuffer();
  return { data, copies: f.cols * f.rows };
}

export default defineTool({
  id: 'passport-photo',
  section: 'image',
  group: 'ai',
  summary: 'Two-phase passport/ID photo maker: analyze a portrait, then generate a compliant photo or print sheet.',
  description:
    `Rules for ${RULE_COUNTRIES.length} countries (${RULE_COUNTRIES.join(', ')}), passport and where known id/visa, each with its source. ` +
    'The background is removed onto bgColor; the photo is scaled so the head (chin to crown) is the middle of the rule’s range × zoom, ' +
    'centred on the face, with the eyes at the rule’s eye line or the crown at 10 % of the height; adjustX/adjustY move the subject by that many mm ' +
    '(positive: right/down). customWidthMm/customHeightMm override the size (the head range scales with the height). JPEG at dpi; maxFileSizeKb ' +
    'lowers the quality until the file fits, or fails naming the smallest size possible. printLayout tiles copies on a 4x6 in, A4 or letter ' +
    'sheet (5 mm margins, 2 mm cut gaps); the result is then a ZIP of the photo and the sheet. Over HTTP, POST …/passport-photo/analyze then ' +
    '…/passport-photo/generate split the two phases; jobId, filename, landmarks, imageWidth and imageHeight come from analyze.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    countryCode: z.string().min(2).max(3).describe('ISO country code (e.g. US, GB, DE, CN).'),
    documentType: z.string().default('passport').describe('passport, id or visa (per country).'),
    bgColor: colorSchema('#FFFFFF').describe('Background color.'),
    printLayout: z.enum(['none', '4x6', 'a4', 'letter']).default('none').describe('Print sheet layout.'),
    maxFileSizeKb: z.number().min(0).default(0).describe('Maximum output size in KB; 0 = no limit.'),
    dpi: z.number().min(72).max(1200).default(300).describe('Output DPI.'),
    customWidthMm: z.number().min(10).max(200).optional().describe('Custom width in mm; overrides the country spec.'),
    customHeightMm: z.number().min(10).max(200).optional().describe('Custom height in mm; overrides the country spec.'),
    zoom: z.number().min(0.5).max(3).default(1).describe('Zoom factor on the head size.'),
    adjustX: z.number().min(-100).max(100).default(0).describe('Horizontal position adjustment in mm (positive: right).'),
    adjustY: z.number().min(-100).max(100).default(0).describe('Vertical position adjustment in mm (positive: down).'),
    jobId: z.string().optional().describe('Job id from the analysis phase (generate route).'),
    filename: z.string().optional().describe('Original file name from the analysis phase (generate route).'),
    landmarks: LANDMARKS.optional().describe('Landmarks from the analysis phase; detected afresh when omitted.'),
    imageWidth: z.number().positive().optional().describe('Image width from the analysis phase.'),
    imageHeight: z.number().positive().optional().describe('Image height from the analysis phase.'),
  }),
  check(s) {
    ruleFor(s.countryCode, s.documentType);
  },
  needs: { bundles: ['background-removal', 'face-detection'] },
  execution: 'long',
  batch: false,
  output: 'JPEG photo at the rule’s size, or a ZIP of the photo and a print sheet',
  examples: ['photo.jpg --country-code US', 'photo.jpg --country-code DE --print-layout a4 --max-file-size-kb 240'],
  async run(ctx, { files }, s) {
    const rule = ruleFor(s.countryCode, s.documentType);
    const p = await readPicture(files[0]!, ctx);
    const m = await matte(p, 'isnet-fp16', ctx, 5, 60);
    let lm: Pick<PortraitLandmarks, 'eyes' | 'chin' | 'crown'>;
    let analysed: PortraitLandmarks | undefined;
    if (s.landmarks) {
      const kx = s.imageWidth ? p.width / s.imageWidth : 1;
      const ky = s.imageHeight ? p.height / s.imageHeight : 1;
      const sc = (q: Pt) => ({ x: q.x * kx, y: q.y * ky });
      lm = {
        eyes: { left: sc(s.landmarks.eyes.left), right: sc(s.landmarks.eyes.right) },
        chin: sc(s.landmarks.chin),
        crown: sc(s.landmarks.crown),
      };
    } else {
      ctx.progress(62, 'face landmarks');
      lm = analysed = await portraitLandmarks(p, m.alpha, ctx);
    }
    ctx.progress(75, 'framing');
    const widthMm = s.customWidthMm ?? rule.widthMm;
    const heightMm = s.customHeightMm ?? rule.heightMm;
    const hScale = heightMm / rule.heightMm;
    const W = mmToPx(widthMm, s.dpi);
    const H = mmToPx(heightMm, s.dpi);
    const headMm = ((rule.head.minMm + rule.head.maxMm) / 2) * hScale * s.zoom;
    const headSrc = lm.chin.y - lm.crown.y;
    if (!(headSrc > 4))
      throw new KilnError('UNSUPPORTED_INPUT', 'The face is too small or the landmarks are inconsistent (chin above crown).');
    const k = ((headMm / 25.4) * s.dpi) / headSrc;
    const eye = { x: (lm.eyes.left.x + lm.eyes.right.x) / 2, y: (lm.eyes.left.y + lm.eyes.right.y) / 2 };
    const eyeFromBottomMm = rule.eyeLine && !s.customHeightMm ? (rule.eyeLine.minMm + rule.eyeLine.maxMm) / 2 : undefined;
    // Where the eye point lands on the photo, in output pixels.
    const tx = W / 2 + mmToPx(s.adjustX, s.dpi);
    const ty =
      (eyeFromBottomMm !== undefined ? H - (eyeFromBottomMm / 25.4) * s.dpi : 0.1 * H + (eye.y - lm.crown.y) * k) +
      mmToPx(s.adjustY, s.dpi);
    // The source rectangle that maps onto the photo, clipped to the image; the rest is background.
    const sx0 = eye.x - tx / k;
    const sy0 = eye.y - ty / k;
    const full = composite({
      width: p.width,
      height: p.height,
      fg: p.rgb,
      alpha: m.alpha,
      background: solidBackground(p.width * p.height, s.bgColor),
    });
    const sharp = await getSharp();
    const cx0 = Math.max(0, Math.floor(sx0));
    const cy0 = Math.max(0, Math.floor(sy0));
    const cx1 = Math.min(p.width, Math.ceil(sx0 + W / k));
    const cy1 = Math.min(p.height, Math.ceil(sy0 + H / k));
    const bg = parseColor(s.bgColor);
    let canvas = sharp({ create: { width: W, height: H, channels: 3, background: { r: bg.r, g: bg.g, b: bg.b } } });
    if (cx1 > cx0 && cy1 > cy0) {
      const left = Math.round((cx0 - sx0) * k);
      const top = Math.round((cy0 - sy0) * k);
      const pw = Math.max(1, Math.round((cx1 - cx0) * k));
      const ph = Math.max(1, Math.round((cy1 - cy0) * k));
      const ex = Math.max(0, -left);
      const ey = Math.max(0, -top);
      const vw = Math.min(pw - ex, W - Math.max(0, left));
      const vh = Math.min(ph - ey, H - Math.max(0, top));
      if (vw > 0 && vh > 0) {
        const part = await sharp(full.data, { raw: { width: p.width, height: p.height, channels: 3 } })
          .extract({ left: cx0, top: cy0, width: cx1 - cx0, height: cy1 - cy0 })
          .resize(pw, ph, { fit: 'fill', kernel: 'lanczos3' })
          .extract({ left: ex, top: ey, width: vw, height: vh })
          .raw()
          .toBuffer();
        canvas = sharp(await canvas.raw().toBuffer(), { raw: { width: W, height: H, channels: 3 } }).composite([
          { input: part, raw: { width: vw, height: vh, channels: 3 }, left: Math.max(0, left), top: Math.max(0, top) },
        ]);
      }
    }
    const pixels = await canvas.removeAlpha().raw().toBuffer();
    ctx.progress(85, 'encoding');
    const jpeg = await fitJpeg(pixels, W, H, s.dpi, s.maxFileSizeKb);
    const outputs: OutputFile[] = [];
    const photoPath = ctx.out('jpg', `-${rule.country.toLowerCase()}-${rule.documentType}`);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(photoPath, jpeg.data);
    outputs.push(outputFile(photoPath));
    let copies: number | undefined;
    if (s.printLayout !== 'none') {
      ctx.progress(92, 'print sheet');
      const sheet = await printSheet(jpeg.data, W, H, s.printLayout, s.dpi);
      const sheetPath = ctx.out('jpg', `-${rule.country.toLowerCase()}-${rule.documentType}-${s.printLayout}`);
      await writeFile(sheetPath, sheet.data);
      outputs.push(outputFile(sheetPath));
      copies = sheet.copies;
    }
    const toMm = (px: number) => Math.round((px / s.dpi) * 25.4 * 10) / 10;
    return {
      outputs,
      data: {
        country: rule.country,
        name: rule.name,
        documentType: rule.documentType,
        widthMm,
        heightMm,
        widthPx: W,
        heightPx: H,
        dpi: s.dpi,
        headHeightMm: toMm(headSrc * k),
        headRangeMm: [rule.head.minMm * hScale, rule.head.maxMm * hScale],
        eyeLineFromBottomMm: toMm(H - ty),
        face: { x: Math.round(tx), y: Math.round(ty) },
        jpegQuality: jpeg.quality,
        bytes: jpeg.data.length,
        ...(copies !== undefined ? { printLayout: s.printLayout, copies } : {}),
        background: rule.background,
        source: rule.source,
        basis: rule.basis,
        ...(analysed ? { faces: analysed.faces, crownFrom: analysed.crownFrom } : {}),
        model: 'isnet',
        device: m.info.device,
        provider: m.info.provider,
      },
    };
  },
});
