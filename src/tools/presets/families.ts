/**
 * The catalog's conversion presets (catalog.json `presets`), one family per base tool. A preset id names
 * its conversion, `<from>-to-<to>`: the input types it takes come from `<from>` (SOURCE_EXTENSIONS), the
 * output extension is `.<to>`, and the family says which setting that fixes (`presets.ts` builds the
 * Preset records; test/presets checks them against the catalog).
 */
import type { Section } from '../../core/tool.js';

export interface PresetFamily {
  section: Section;
  /** Base tool id. */
  tool: string;
  /** The settings the catalog lists as meaningful for these presets (docs, completions). */
  optional: string[];
  /**
   * The base tool's `format` for the output extension (`jpg` → `jpeg` where the tool spells it so).
   * Absent: nothing is fixed, the base tool makes only that kind of output (vectorize, image-to-pdf…).
   */
  format?: (ext: string) => string;
  ids: string[];
}

/** What a preset id's `<from>` accepts when it is more than `.<from>` itself. */
export const SOURCE_EXTENSIONS: Readonly<Record<string, string[]>> = {
  jpg: ['.jpg', '.jpeg'],
  heic: ['.heic', '.heif'],
  tiff: ['.tiff', '.tif'],
  svg: ['.svg', '.svgz'],
  spreadsheet: ['.xlsx', '.xls'],
};

const same = (ext: string) => ext;

/** In catalog order (the CLI's help, completions and the OpenAPI document list them so). */
export const PRESET_FAMILIES: readonly PresetFamily[] = [
  {
    section: 'image',
    tool: 'convert',
    optional: ['quality'],
    format: same,
    ids: [
      'jpg-to-png',
      'png-to-jpg',
      'jpg-to-webp',
      'png-to-webp',
      'webp-to-jpg',
      'webp-to-png',
      'jpg-to-avif',
      'png-to-avif',
      'webp-to-avif',
      'heic-to-jpg',
      'heic-to-png',
      'heic-to-avif',
      'jpg-to-gif',
      'png-to-gif',
      'gif-to-jpg',
      'gif-to-png',
      'webp-to-gif',
      'jpg-to-tiff',
      'png-to-tiff',
      'tiff-to-jpg',
      'tiff-to-png',
      'psd-to-jpg',
      'psd-to-png',
      'png-to-eps',
      'jpg-to-eps',
      'eps-to-png',
      'eps-to-jpg',
    ],
  },
  { section: 'image', tool: 'vectorize', optional: [], ids: ['png-to-svg', 'jpg-to-svg', 'tiff-to-svg', 'psd-to-svg', 'eps-to-svg'] },
  {
    section: 'image',
    tool: 'svg-to-raster',
    optional: ['quality', 'width', 'height', 'dpi', 'background'],
    format: (ext) => (ext === 'jpg' ? 'jpeg' : ext),
    ids: ['svg-to-png', 'svg-to-jpg'],
  },
  {
    section: 'image',
    tool: 'image-to-pdf',
    optional: ['pageSize', 'orientation', 'margin', 'targetSize'],
    ids: ['jpg-to-pdf', 'png-to-pdf', 'heic-to-pdf', 'tiff-to-pdf', 'webp-to-pdf', 'gif-to-pdf', 'eps-to-pdf'],
  },
  {
    section: 'pdf',
    tool: 'pdf-to-image',
    optional: ['pages', 'dpi', 'quality'],
    format: same,
    ids: ['pdf-to-jpg', 'pdf-to-png', 'pdf-to-tiff'],
  },
  {
    section: 'video',
    tool: 'convert-video',
    optional: ['quality'],
    format: same,
    ids: [
      'mov-to-mp4',
      'webm-to-mp4',
      'mkv-to-mp4',
      'avi-to-mp4',
      'mp4-to-mov',
      'mp4-to-webm',
      'webm-to-mov',
      'mkv-to-mov',
      'avi-to-mov',
      'mp4-to-avi',
      'mov-to-avi',
      'mkv-to-avi',
      'avi-to-mkv',
    ],
  },
  {
    section: 'video',
    tool: 'video-to-gif',
    optional: ['fps', 'width', 'startS', 'durationS'],
    ids: ['mp4-to-gif', 'mov-to-gif', 'mkv-to-gif', 'avi-to-gif'],
  },
  { section: 'video', tool: 'gif-to-video', optional: [], format: same, ids: ['gif-to-mp4', 'gif-to-webm', 'gif-to-mov'] },
  {
    section: 'video',
    tool: 'extract-audio',
    optional: [],
    format: same,
    ids: ['mp4-to-mp3', 'mov-to-mp3', 'mkv-to-mp3', 'webm-to-mp3', 'avi-to-mp3', 'mp4-to-wav', 'mov-to-wav', 'mp4-to-ogg'],
  },
  {
    section: 'audio',
    tool: 'convert-audio',
    optional: [],
    format: same,
    ids: [
      'm4a-to-mp3',
      'm4a-to-wav',
      'aac-to-mp3',
      'aac-to-wav',
      'aac-to-flac',
      'ogg-to-mp3',
      'ogg-to-wav',
      'wav-to-mp3',
      'mp3-to-wav',
      'flac-to-mp3',
    ],
  },
  { section: 'files', tool: 'convert-spreadsheet', optional: [], format: same, ids: ['spreadsheet-to-csv'] },
];
