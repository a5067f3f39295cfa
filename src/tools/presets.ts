/**
 * The 83 conversion presets (catalog.json `presets`). A preset is a route and a CLI subcommand that runs
 * its base tool with some settings fixed (usually the output format) and only the listed input types.
 * Other settings of the base tool are still accepted.
 */
import type { Section, Tool } from '../core/tool.js';

export interface Preset {
  id: string;
  section: Section;
  /** Base tool id. */
  tool: string;
  fixed: Record<string, unknown>;
  /** Input extensions the preset takes (checked from the bytes). */
  accept: string[];
  outputExtension: string;
  /** The settings the catalog lists as meaningful for this preset (docs, completions). */
  optional: string[];
}

export const PRESETS: readonly Preset[] = [
  { id: "jpg-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".jpg", ".jpeg"], outputExtension: ".png", optional: ["quality"] },
  { id: "png-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".png"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "jpg-to-webp", section: "image", tool: "convert", fixed: {"format": "webp"}, accept: [".jpg", ".jpeg"], outputExtension: ".webp", optional: ["quality"] },
  { id: "png-to-webp", section: "image", tool: "convert", fixed: {"format": "webp"}, accept: [".png"], outputExtension: ".webp", optional: ["quality"] },
  { id: "webp-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".webp"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "webp-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".webp"], outputExtension: ".png", optional: ["quality"] },
  { id: "jpg-to-avif", section: "image", tool: "convert", fixed: {"format": "avif"}, accept: [".jpg", ".jpeg"], outputExtension: ".avif", optional: ["quality"] },
  { id: "png-to-avif", section: "image", tool: "convert", fixed: {"format": "avif"}, accept: [".png"], outputExtension: ".avif", optional: ["quality"] },
  { id: "webp-to-avif", section: "image", tool: "convert", fixed: {"format": "avif"}, accept: [".webp"], outputExtension: ".avif", optional: ["quality"] },
  { id: "heic-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".heic", ".heif"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "heic-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".heic", ".heif"], outputExtension: ".png", optional: ["quality"] },
  { id: "heic-to-avif", section: "image", tool: "convert", fixed: {"format": "avif"}, accept: [".heic", ".heif"], outputExtension: ".avif", optional: ["quality"] },
  { id: "jpg-to-gif", section: "image", tool: "convert", fixed: {"format": "gif"}, accept: [".jpg", ".jpeg"], outputExtension: ".gif", optional: ["quality"] },
  { id: "png-to-gif", section: "image", tool: "convert", fixed: {"format": "gif"}, accept: [".png"], outputExtension: ".gif", optional: ["quality"] },
  { id: "gif-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".gif"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "gif-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".gif"], outputExtension: ".png", optional: ["quality"] },
  { id: "webp-to-gif", section: "image", tool: "convert", fixed: {"format": "gif"}, accept: [".webp"], outputExtension: ".gif", optional: ["quality"] },
  { id: "jpg-to-tiff", section: "image", tool: "convert", fixed: {"format": "tiff"}, accept: [".jpg", ".jpeg"], outputExtension: ".tiff", optional: ["quality"] },
  { id: "png-to-tiff", section: "image", tool: "convert", fixed: {"format": "tiff"}, accept: [".png"], outputExtension: ".tiff", optional: ["quality"] },
  { id: "tiff-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".tiff", ".tif"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "tiff-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".tiff", ".tif"], outputExtension: ".png", optional: ["quality"] },
  { id: "psd-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".psd"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "psd-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".psd"], outputExtension: ".png", optional: ["quality"] },
  { id: "png-to-eps", section: "image", tool: "convert", fixed: {"format": "eps"}, accept: [".png"], outputExtension: ".eps", optional: ["quality"] },
  { id: "jpg-to-eps", section: "image", tool: "convert", fixed: {"format": "eps"}, accept: [".jpg", ".jpeg"], outputExtension: ".eps", optional: ["quality"] },
  { id: "eps-to-png", section: "image", tool: "convert", fixed: {"format": "png"}, accept: [".eps"], outputExtension: ".png", optional: ["quality"] },
  { id: "eps-to-jpg", section: "image", tool: "convert", fixed: {"format": "jpg"}, accept: [".eps"], outputExtension: ".jpg", optional: ["quality"] },
  { id: "png-to-svg", section: "image", tool: "vectorize", fixed: {}, accept: [".png"], outputExtension: ".svg", optional: [] },
  { id: "jpg-to-svg", section: "image", tool: "vectorize", fixed: {}, accept: [".jpg", ".jpeg"], outputExtension: ".svg", optional: [] },
  { id: "tiff-to-svg", section: "image", tool: "vectorize", fixed: {}, accept: [".tiff", ".tif"], outputExtension: ".svg", optional: [] },
  { id: "psd-to-svg", section: "image", tool: "vectorize", fixed: {}, accept: [".psd"], outputExtension: ".svg", optional: [] },
  { id: "eps-to-svg", section: "image", tool: "vectorize", fixed: {}, accept: [".eps"], outputExtension: ".svg", optional: [] },
  { id: "svg-to-png", section: "image", tool: "svg-to-raster", fixed: {"format": "png"}, accept: [".svg", ".svgz"], outputExtension: ".png", optional: ["quality", "width", "height", "dpi", "background"] },
  { id: "svg-to-jpg", section: "image", tool: "svg-to-raster", fixed: {"format": "jpeg"}, accept: [".svg", ".svgz"], outputExtension: ".jpg", optional: ["quality", "width", "height", "dpi", "background"] },
  { id: "jpg-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".jpg", ".jpeg"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "png-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".png"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "heic-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".heic", ".heif"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "tiff-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".tiff", ".tif"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "webp-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".webp"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "gif-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".gif"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "eps-to-pdf", section: "image", tool: "image-to-pdf", fixed: {}, accept: [".eps"], outputExtension: ".pdf", optional: ["pageSize", "orientation", "margin", "targetSize"] },
  { id: "pdf-to-jpg", section: "pdf", tool: "pdf-to-image", fixed: {"format": "jpg"}, accept: [".pdf"], outputExtension: ".jpg", optional: ["pages", "dpi", "quality"] },
  { id: "pdf-to-png", section: "pdf", tool: "pdf-to-image", fixed: {"format": "png"}, accept: [".pdf"], outputExtension: ".png", optional: ["pages", "dpi", "quality"] },
  { id: "pdf-to-tiff", section: "pdf", tool: "pdf-to-image", fixed: {"format": "tiff"}, accept: [".pdf"], outputExtension: ".tiff", optional: ["pages", "dpi", "quality"] },
  { id: "mov-to-mp4", section: "video", tool: "convert-video", fixed: {"format": "mp4"}, accept: [".mov"], outputExtension: ".mp4", optional: ["quality"] },
  { id: "webm-to-mp4", section: "video", tool: "convert-video", fixed: {"format": "mp4"}, accept: [".webm"], outputExtension: ".mp4", optional: ["quality"] },
  { id: "mkv-to-mp4", section: "video", tool: "convert-video", fixed: {"format": "mp4"}, accept: [".mkv"], outputExtension: ".mp4", optional: ["quality"] },
  { id: "avi-to-mp4", section: "video", tool: "convert-video", fixed: {"format": "mp4"}, accept: [".avi"], outputExtension: ".mp4", optional: ["quality"] },
  { id: "mp4-to-mov", section: "video", tool: "convert-video", fixed: {"format": "mov"}, accept: [".mp4"], outputExtension: ".mov", optional: ["quality"] },
  { id: "mp4-to-webm", section: "video", tool: "convert-video", fixed: {"format": "webm"}, accept: [".mp4"], outputExtension: ".webm", optional: ["quality"] },
  { id: "webm-to-mov", section: "video", tool: "convert-video", fixed: {"format": "mov"}, accept: [".webm"], outputExtension: ".mov", optional: ["quality"] },
  { id: "mkv-to-mov", section: "video", tool: "convert-video", fixed: {"format": "mov"}, accept: [".mkv"], outputExtension: ".mov", optional: ["quality"] },
  { id: "avi-to-mov", section: "video", tool: "convert-video", fixed: {"format": "mov"}, accept: [".avi"], outputExtension: ".mov", optional: ["quality"] },
  { id: "mp4-to-avi", section: "video", tool: "convert-video", fixed: {"format": "avi"}, accept: [".mp4"], outputExtension: ".avi", optional: ["quality"] },
  { id: "mov-to-avi", section: "video", tool: "convert-video", fixed: {"format": "avi"}, accept: [".mov"], outputExtension: ".avi", optional: ["quality"] },
  { id: "mkv-to-avi", section: "video", tool: "convert-video", fixed: {"format": "avi"}, accept: [".mkv"], outputExtension: ".avi", optional: ["quality"] },
  { id: "avi-to-mkv", section: "video", tool: "convert-video", fixed: {"format": "mkv"}, accept: [".avi"], outputExtension: ".mkv", optional: ["quality"] },
  { id: "mp4-to-gif", section: "video", tool: "video-to-gif", fixed: {}, accept: [".mp4"], outputExtension: ".gif", optional: ["fps", "width", "startS", "durationS"] },
  { id: "mov-to-gif", section: "video", tool: "video-to-gif", fixed: {}, accept: [".mov"], outputExtension: ".gif", optional: ["fps", "width", "startS", "durationS"] },
  { id: "mkv-to-gif", section: "video", tool: "video-to-gif", fixed: {}, accept: [".mkv"], outputExtension: ".gif", optional: ["fps", "width", "startS", "durationS"] },
  { id: "avi-to-gif", section: "video", tool: "video-to-gif", fixed: {}, accept: [".avi"], outputExtension: ".gif", optional: ["fps", "width", "startS", "durationS"] },
  { id: "gif-to-mp4", section: "video", tool: "gif-to-video", fixed: {"format": "mp4"}, accept: [".gif"], outputExtension: ".mp4", optional: [] },
  { id: "gif-to-webm", section: "video", tool: "gif-to-video", fixed: {"format": "webm"}, accept: [".gif"], outputExtension: ".webm", optional: [] },
  { id: "gif-to-mov", section: "video", tool: "gif-to-video", fixed: {"format": "mov"}, accept: [".gif"], outputExtension: ".mov", optional: [] },
  { id: "mp4-to-mp3", section: "video", tool: "extract-audio", fixed: {"format": "mp3"}, accept: [".mp4"], outputExtension: ".mp3", optional: [] },
  { id: "mov-to-mp3", section: "video", tool: "extract-audio", fixed: {"format": "mp3"}, accept: [".mov"], outputExtension: ".mp3", optional: [] },
  { id: "mkv-to-mp3", section: "video", tool: "extract-audio", fixed: {"format": "mp3"}, accept: [".mkv"], outputExtension: ".mp3", optional: [] },
  { id: "webm-to-mp3", section: "video", tool: "extract-audio", fixed: {"format": "mp3"}, accept: [".webm"], outputExtension: ".mp3", optional: [] },
  { id: "avi-to-mp3", section: "video", tool: "extract-audio", fixed: {"format": "mp3"}, accept: [".avi"], outputExtension: ".mp3", optional: [] },
  { id: "mp4-to-wav", section: "video", tool: "extract-audio", fixed: {"format": "wav"}, accept: [".mp4"], outputExtension: ".wav", optional: [] },
  { id: "mov-to-wav", section: "video", tool: "extract-audio", fixed: {"format": "wav"}, accept: [".mov"], outputExtension: ".wav", optional: [] },
  { id: "mp4-to-ogg", section: "video", tool: "extract-audio", fixed: {"format": "ogg"}, accept: [".mp4"], outputExtension: ".ogg", optional: [] },
  { id: "m4a-to-mp3", section: "audio", tool: "convert-audio", fixed: {"format": "mp3"}, accept: [".m4a"], outputExtension: ".mp3", optional: [] },
  { id: "m4a-to-wav", section: "audio", tool: "convert-audio", fixed: {"format": "wav"}, accept: [".m4a"], outputExtension: ".wav", optional: [] },
  { id: "aac-to-mp3", section: "audio", tool: "convert-audio", fixed: {"format": "mp3"}, accept: [".aac"], outputExtension: ".mp3", optional: [] },
  { id: "aac-to-wav", section: "audio", tool: "convert-audio", fixed: {"format": "wav"}, accept: [".aac"], outputExtension: ".wav", optional: [] },
  { id: "aac-to-flac", section: "audio", tool: "convert-audio", fixed: {"format": "flac"}, accept: [".aac"], outputExtension: ".flac", optional: [] },
  { id: "ogg-to-mp3", section: "audio", tool: "convert-audio", fixed: {"format": "mp3"}, accept: [".ogg"], outputExtension: ".mp3", optional: [] },
  { id: "ogg-to-wav", section: "audio", tool: "convert-audio", fixed: {"format": "wav"}, accept: [".ogg"], outputExtension: ".wav", optional: [] },
  { id: "wav-to-mp3", section: "audio", tool: "convert-audio", fixed: {"format": "mp3"}, accept: [".wav"], outputExtension: ".mp3", optional: [] },
  { id: "mp3-to-wav", section: "audio", tool: "convert-audio", fixed: {"format": "wav"}, accept: [".mp3"], outputExtension: ".wav", optional: [] },
  { id: "flac-to-mp3", section: "audio", tool: "convert-audio", fixed: {"format": "mp3"}, accept: [".flac"], outputExtension: ".mp3", optional: [] },
  { id: "spreadsheet-to-csv", section: "files", tool: "convert-spreadsheet", fixed: {"format": "csv"}, accept: [".xlsx", ".xls"], outputExtension: ".csv", optional: [] },
];

const byId = new Map(PRESETS.map((p) => [p.id, p]));

export function findPreset(id: string): Preset | undefined {
  return byId.get(id);
}

/**
 * A preset as a Tool of its own: the base tool with the preset's input types, its fixed settings removed
 * from the schema (they cannot be overridden) and merged back in before the base tool runs. The CLI, the
 * routes, batch and OpenAPI then treat presets exactly like tools.
 */
export function presetTool(preset: Preset, base: Tool): Tool {
  const fixedKeys = Object.keys(preset.fixed).filter((k) => k in base.settings.shape);
  const mask = Object.fromEntries(fixedKeys.map((k) => [k, true as const]));
  const settings = base.settings.omit(mask);
  if (base.input.kind === 'none') throw new Error(`preset ${preset.id}: base ${base.id} takes no file`);
  return {
    ...base,
    id: preset.id,
    summary: `Convert ${preset.accept.join('/')} to ${preset.outputExtension} (preset of ${base.id}).`,
    description: `Runs ${base.id} with ${JSON.stringify(preset.fixed)}; takes ${preset.accept.join(', ')}.`,
    input: { ...base.input, accept: preset.accept },
    settings,
    check: base.check ? (s) => base.check!({ ...s, ...preset.fixed }) : undefined,
    examples: [`input${preset.accept[0]} -o output${preset.outputExtension}`],
    run: (ctx, inputs, s) => base.run(ctx, inputs, { ...base.settings.parse({ ...s, ...preset.fixed }) }),
  };
}
