/**
 * The staged smoke test: a known line rendered here is read back by the staged generation's models
 * (loaded from its directory, exactly as requests will load them). A generation that cannot read it is
 * never switched in.
 */
import { getSharp } from '../../engines/sharp.js';
import type { PpocrOutput } from '../models/ppocr-v4.js';
import { runModel } from '../run-model.js';
import { DET_OPTIONS } from '../tasks/ocr-tiers.js';

export async function renderLine(
  text: string,
  o: { width?: number; height?: number; size?: number; font?: string } = {},
): Promise<{ rgb: Uint8Array; width: number; height: number }> {
  const sharp = await getSharp();
  const width = o.width ?? 720;
  const height = o.height ?? 120;
  const esc = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/><text x="24" y="${Math.round(height / 2 + (o.size ?? 44) / 3)}" font-family="${o.font ?? 'DejaVu Sans'}" font-size="${o.size ?? 44}" fill="#000">${esc}</text></svg>`;
  const buf = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer();
  return { rgb: new Uint8Array(buf.buffer, buf.byteOffset, buf.length), width, height };
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toUpperCase();

/** Resolves with what was read; throws when it is not `expected`. */
export async function smokeTest(generationDir: string, expected: string, signal?: AbortSignal): Promise<string> {
  const img = await renderLine(expected);
  const { output } = await runModel<PpocrOutput>(
    'ppocr-v4',
    { ...img, det: DET_OPTIONS.balanced, recognise: true, angle: false },
    { dataDir: generationDir, signal },
  );
  const got = output.lines.map((l) => l.text).join(' ');
  if (norm(got) !== norm(expected))
    throw new Error(`the staged runtime read ${JSON.stringify(got)} instead of ${JSON.stringify(expected)}`);
  return got;
}
