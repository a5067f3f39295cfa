/**
 * What `ocr` and `ocr-pdf` share: their settings block (spec "ocr and ocr-pdf"), the refusals made
 * before a job is queued, and choosing the tier with a lease on the OCR runtime generation.
 */
import { z } from 'zod';
import { activeGeneration, acquireLease, type Lease } from '../ai/ocr/generations.js';
import { LANGUAGES, type OcrSettings, QUALITIES, type Quality, requestedQuality, resolveQuality } from '../ai/tasks/ocr-tiers.js';

/** Spec: one request reads at most 50 pages (ocr-pdf's pages, a multi-page TIFF's pages). */
export const MAX_OCR_PAGES = 50;

export const ocrSettingsShape = {
  quality: z
    .enum(QUALITIES)
    .nullish()
    .describe(
      "OCR tier: 'fast' = built-in tesseract; 'balanced' (PP-OCRv4 detection + recognition) and 'best' (larger input, angle classifier, enhanced-variant scoring) need the exact OCR runtime (kiln features install ocr). Omitted: the best available tier (best, balanced, fast; Korean: best, balanced). An explicit quality never falls back.",
    ),
  language: z.enum(LANGUAGES).default('auto').describe("Language hint: auto, en, de, fr, es, zh, ja, ko. 'fast' does not support ko."),
  enhance: z
    .boolean()
    .nullish()
    .describe(
      "Local contrast enhancement (denoise, contrast stretch, CLAHE). Default: 'fast' off; 'balanced' off; 'best' scores the enhanced variant against the plain one and keeps the better.",
    ),
  engine: z
    .enum(['tesseract', 'paddleocr'])
    .optional()
    .describe("Deprecated alias of quality: tesseract = 'fast', paddleocr = 'balanced'."),
};

export interface Chosen {
  quality: Quality;
  requested: Quality | null;
  lease?: Lease;
  warnings: string[];
}

/** FEATURE_NOT_INSTALLED for an explicit runtime tier when no generation is installed (cheap: reads one link). */
export async function preflightOcr(toolId: string, s: OcrSettings, dataDir: string): Promise<void> {
  resolveQuality(toolId, s, !!(await activeGeneration(dataDir)));
}

/** The tier that runs, with a lease on the active generation for the runtime tiers (release it when done). */
export async function chooseTier(toolId: string, s: OcrSettings, dataDir: string): Promise<Chosen> {
  const warnings: string[] = [];
  if (s.engine) warnings.push(`The setting engine is deprecated; use quality ('${s.engine === 'tesseract' ? 'fast' : 'balanced'}').`);
  const requested = requestedQuality(s) ?? null;
  const lease = requested === 'fast' ? undefined : await acquireLease(dataDir);
  try {
    const quality = resolveQuality(toolId, s, !!lease);
    if (quality === 'fast') {
      await lease?.release();
      return { quality, requested, warnings };
    }
    return { quality, requested, lease, warnings };
  } catch (e) {
    await lease?.release();
    throw e;
  }
}
