import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp, withoutUnusedAlpha } from '../../../engines/sharp.js';
import { clipLayer, layerInput } from '../_shared/layer.js';
import { MEME_FONT_IDS, memeFont } from '../_shared/meme-fonts.js';
import { layoutBoxes, MEME_TEMPLATE_IDS, MEME_TEMPLATES, TEXT_LAYOUTS, type MemeBox } from '../_shared/meme-templates.js';
import { outline, renderText } from '../_shared/text.js';
import { colorSchema } from '../../_shared/color.js';
import { outputFile } from '../../_shared/output.js';
import { checkAbort } from '../_shared/cancel.js';
import { openInput } from '../_shared/decode.js';

export default defineTool({
  id: 'meme-generator',
  section: 'image',
  group: 'watermark',
  summary: 'Make a meme from a built-in template (JSON body) or an uploaded image with classic outlined text.',
  description:
    `Template mode: templateId (${MEME_TEMPLATE_IDS.join(', ')}), each with its own text box ids. Custom-image mode: upload the picture as "file" (CLI --file); ` +
    'textLayout picks the boxes (top/bottom, top, bottom, center, left/right). If both are given the template wins. Text wraps inside its box and, without fontSize, ' +
    'takes the largest size that fits; a fontSize that does not fit shrinks to fit. Fonts ship with kiln (SIL OFL); arial-black is Archivo Black and comic-sans is Comic Neue, open look-alikes.',
  input: {
    kind: 'none',
    extra: [{ field: 'file', flag: 'file', accept: ['image/*'], required: false, description: 'the picture for custom-image mode' }],
  },
  frames: 'first',
  settings: z.object({
    templateId: z.enum(MEME_TEMPLATE_IDS).optional().describe('Built-in template id (template mode).'),
    textLayout: z
      .enum(TEXT_LAYOUTS)
      .default('top-bottom')
      .describe('Text box layout for an uploaded image (templates define their own boxes).'),
    textBoxes: z
      .array(z.object({ id: z.string().min(1).max(40), text: z.string().max(500) }).strict())
      .max(20)
      .default([])
      .describe('Text boxes [{id, text}].'),
    fontFamily: z.enum(MEME_FONT_IDS).default('anton').describe('Typeface.'),
    fontSize: z.number().min(8).max(200).optional().describe('Font size in px; auto-fitted when omitted.'),
    textColor: colorSchema('#ffffff').describe('Text fill color.'),
    strokeColor: colorSchema('#000000').describe('Text outline color.'),
    textAlign: z.enum(['left', 'center', 'right']).default('center').describe('Text alignment.'),
    allCaps: z.boolean().default(true).describe('Upper-case the text.'),
  }),
  batch: false,
  output: 'PNG image',
  examples: [
    `--template-id approve-reject --text-boxes '[{"id":"top","text":"writing tests later"},{"id":"bottom","text":"writing tests first"}]' -o meme.png`,
    `--file cat.jpg --text-layout top-bottom --text-boxes '[{"id":"top","text":"hello"},{"id":"bottom","text":"world"}]' -o meme.png`,
  ],
  async run(ctx, { extra }, s) {
    const sharp = await getSharp();
    const upload = extra.file?.[0];
    let base: Buffer;
    let W: number;
    let H: number;
    let boxes: MemeBox[];
    let mode: 'template' | 'custom-image';
    if (s.templateId) {
      const t = MEME_TEMPLATES.find((x) => x.id === s.templateId)!;
      mode = 'template';
      ({ width: W, height: H, boxes } = t);
      base = await sharp(Buffer.from(t.svg)).ensureAlpha().raw().toBuffer();
    } else if (upload) {
      mode = 'custom-image';
      const img = await openInput(upload, ctx.workDir);
      const { data, info } = await img.autoOrient().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      base = data;
      W = info.width;
      H = info.height;
      boxes = layoutBoxes(s.textLayout, W, H);
    } else {
      throw new KilnError(
        'VALIDATION_ERROR',
        'meme-generator needs templateId (template mode) or an uploaded image in "file" (CLI --file).',
        { details: [{ path: 'templateId', message: 'templateId or file is required' }] },
      );
    }
    const known = new Set(boxes.map((b) => b.id));
    const unknown = s.textBoxes.filter((b) => !known.has(b.id)).map((b) => b.id);
    if (unknown.length)
      throw new KilnError(
        'VALIDATION_ERROR',
        `Unknown text box id${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; this ${mode === 'template' ? 'template' : 'layout'} has ${[...known].join(', ')}.`,
        { details: [{ path: 'textBoxes', message: 'unknown id' }] },
      );
    const font = await memeFont(s.fontFamily, ctx.dataDir);
    const layers = [];
    const placed: { id: string; fontSize: number; left: number; top: number; width: number; height: number }[] = [];
    for (const tb of s.textBoxes) {
      checkAbort(ctx.signal);
      const text = (s.allCaps ? tb.text.toUpperCase() : tb.text).trim();
      if (!text) continue;
      const box = boxes.find((b) => b.id === tb.id)!;
      const spec = { text, family: font.pango, fontfile: font.file, width: box.w, align: s.textAlign, color: s.textColor };
      let glyphs = s.fontSize ? await renderText({ ...spec, size: s.fontSize }) : undefined;
      if (!glyphs || glyphs.height > box.h || glyphs.width > box.w) glyphs = await renderText({ ...spec, fitHeight: box.h });
      const stroke = outline(glyphs, Math.min(8, Math.max(1, glyphs.size * 0.07)), s.strokeColor);
      const pad = (stroke.width - glyphs.width) / 2;
      const gx = box.x + (s.textAlign === 'left' ? 0 : s.textAlign === 'right' ? box.w - glyphs.width : (box.w - glyphs.width) / 2);
      const gy = box.y + (box.valign === 'top' ? 0 : box.valign === 'bottom' ? box.h - glyphs.height : (box.h - glyphs.height) / 2);
      const x = Math.max(0, Math.round(gx));
      const y = Math.max(0, Math.round(gy));
      for (const [layer, lx, ly] of [
        [stroke, x - pad, y - pad],
        [glyphs, x, y],
      ] as const) {
        const clipped = clipLayer(layer, Math.round(lx), Math.round(ly), W, H);
        if (clipped) layers.push(layerInput(clipped));
      }
      placed.push({ id: tb.id, fontSize: Math.round(glyphs.size), left: x, top: y, width: glyphs.width, height: glyphs.height });
    }
    const out = ctx.out('png', '', upload && mode === 'custom-image' ? undefined : `meme-${s.templateId}`);
    // Drawn as RGBA: a meme of an opaque picture is written without the alpha channel.
    const meme = await withoutUnusedAlpha(sharp(base, { raw: { width: W, height: H, channels: 4 } }).composite(layers));
    await meme.png().toFile(out);
    return {
      outputs: [outputFile(out)],
      data: {
        mode,
        ...(mode === 'template' ? { templateId: s.templateId } : { textLayout: s.textLayout }),
        width: W,
        height: H,
        font: s.fontFamily,
        boxes: boxes.map((b) => b.id),
        placed,
      },
    };
  },
});
