/**
 * The OCR tiers and how a request picks one (spec "OCR quality and languages"): 'fast' is the
 * built-in tesseract; 'balanced' and 'best' need the exact OCR runtime. An explicit tier never falls
 * back; with quality omitted the best available tier is used (Korean: best, then balanced, never
 * fast). The deprecated `engine` maps tesseract → fast and paddleocr → balanced.
 */
import { KilnError } from '../../core/errors.js';
import type { DetOptions } from '../models/ppocr-det.js';

export const QUALITIES = ['fast', 'balanced', 'best'] as const;
export type Quality = (typeof QUALITIES)[number];
export const LANGUAGES = ['auto', 'en', 'de', 'fr', 'es', 'zh', 'ja', 'ko'] as const;
export type Language = (typeof LANGUAGES)[number];

export interface OcrSettings {
  quality?: Quality | null;
  language: Language;
  enhance?: boolean | null;
  engine?: 'tesseract' | 'paddleocr';
}

/**
 * 'balanced': the detector at 960 px on the longest side, default thresholds, no angle classifier.
 * 'best': 1600 px (small print survives), a lower box threshold and wider boxes, the 0°/180°
 * classifier, and the enhanced variant kept only when it scores better.
 */
export const DET_OPTIONS: Record<'balanced' | 'best', DetOptions> = {
  balanced: { limitSide: 960, thresh: 0.3, boxThresh: 0.6, unclipRatio: 1.6 },
  best: { limitSide: 1600, thresh: 0.3, boxThresh: 0.5, unclipRatio: 1.7 },
};

/** Tesseract's language packs for each hint ('auto': English with Latin accents read well by eng). */
export const TESSERACT_LANG: Record<Language, string> = {
  auto: 'eng',
  en: 'eng',
  de: 'deu',
  fr: 'fra',
  es: 'spa',
  zh: 'chi_sim',
  ja: 'jpn',
  ko: 'kor',
};

export function requestedQuality(s: OcrSettings): Quality | undefined {
  if (s.quality) return s.quality;
  if (s.engine === 'tesseract') return 'fast';
  if (s.engine === 'paddleocr') return 'balanced';
  return undefined;
}

/** The refusals that need no file and no runtime: checked before a job is queued. */
export function checkOcrSettings(s: OcrSettings): void {
  if (s.language === 'ko' && requestedQuality(s) === 'fast')
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `Korean is not supported by quality 'fast'${s.engine === 'tesseract' && !s.quality ? " (engine 'tesseract')" : ''}: use quality 'balanced' or 'best' (they need the exact OCR runtime: kiln features install ocr).`,
      { reason: 'fast-korean-unsupported' },
    );
}

export function runtimeNotInstalled(toolId: string, quality: string): KilnError {
  return new KilnError(
    'FEATURE_NOT_INSTALLED',
    `${toolId} with quality '${quality}' needs the exact OCR runtime, which is not installed (no fallback to 'fast'). ` +
      'Install it with `kiln features install ocr`, or as an admin with POST /api/v1/admin/features/ocr/install.',
    {
      reason: 'ocr-runtime-missing',
      details: {
        tool: toolId,
        missingBundles: ['ocr'],
        install: { cli: 'kiln features install ocr', http: 'POST /api/v1/admin/features/ocr/install' },
      },
    },
  );
}

/** The tier that runs, given whether the exact runtime is installed. */
export function resolveQuality(toolId: string, s: OcrSettings, runtimeInstalled: boolean): Quality {
  checkOcrSettings(s);
  const asked = requestedQuality(s);
  if (asked === 'fast') return 'fast';
  if (asked) {
    if (!runtimeInstalled) throw runtimeNotInstalled(toolId, asked);
    return asked;
  }
  if (runtimeInstalled) return 'best';
  if (s.language === 'ko') throw runtimeNotInstalled(toolId, 'best');
  return 'fast';
}
