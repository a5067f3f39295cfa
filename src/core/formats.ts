/**
 * File formats by name: the one table that maps an extension (with its aliases) to a format and its
 * family. The CLI uses it to make the output's format follow the output's file name; settings use it
 * to accept the usual spellings (`jpeg` for `jpg`, `tif` for `tiff`).
 */
export type FormatFamily = 'image' | 'audio' | 'video' | 'document' | 'data';

interface FormatInfo {
  family: FormatFamily;
  /** Other spellings of the extension. */
  aliases?: string[];
}

const FORMATS: Record<string, FormatInfo> = {
  jpg: { family: 'image', aliases: ['jpeg', 'jpe', 'jfif'] },
  png: { family: 'image' },
  webp: { family: 'image' },
  avif: { family: 'image' },
  tiff: { family: 'image', aliases: ['tif'] },
  gif: { family: 'image' },
  heic: { family: 'image' },
  heif: { family: 'image' },
  jxl: { family: 'image' },
  bmp: { family: 'image' },
  ico: { family: 'image' },
  svg: { family: 'image' },
  eps: { family: 'image' },
  mp3: { family: 'audio' },
  wav: { family: 'audio', aliases: ['wave'] },
  ogg: { family: 'audio', aliases: ['oga'] },
  opus: { family: 'audio' },
  flac: { family: 'audio' },
  m4a: { family: 'audio' },
  aac: { family: 'audio' },
  m4r: { family: 'audio' },
  mp4: { family: 'video', aliases: ['m4v'] },
  mov: { family: 'video', aliases: ['qt'] },
  webm: { family: 'video' },
  avi: { family: 'video' },
  mkv: { family: 'video' },
  pdf: { family: 'document' },
  docx: { family: 'document' },
  odt: { family: 'document' },
  rtf: { family: 'document' },
  txt: { family: 'document' },
  md: { family: 'document', aliases: ['markdown'] },
  html: { family: 'document', aliases: ['htm'] },
  epub: { family: 'document' },
  pptx: { family: 'document' },
  odp: { family: 'document' },
  xlsx: { family: 'document' },
  ods: { family: 'document' },
  csv: { family: 'document' },
  json: { family: 'data' },
  zip: { family: 'data' },
  srt: { family: 'data' },
  vtt: { family: 'data' },
};

const BY_SPELLING = new Map<string, string>();
for (const [name, info] of Object.entries(FORMATS)) {
  BY_SPELLING.set(name, name);
  for (const a of info.aliases ?? []) BY_SPELLING.set(a, name);
}

/** The canonical format of an extension or format name (`JPEG` → `jpg`), or undefined when unknown. */
export function canonicalFormat(spelling: string): string | undefined {
  return BY_SPELLING.get(spelling.toLowerCase().replace(/^\./, ''));
}

export function formatFamily(format: string): FormatFamily | undefined {
  const c = canonicalFormat(format);
  return c ? FORMATS[c]!.family : undefined;
}

/** The format a file name asks for (by its extension), or undefined. */
export function formatOfFileName(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? canonicalFormat(name.slice(dot + 1)) : undefined;
}

/** The member of `choices` that spells `format` (a tool's enum may say `jpeg` where the name says `.jpg`). */
export function formatChoice(choices: readonly string[], format: string): string | undefined {
  const want = canonicalFormat(format);
  return want ? choices.find((c) => canonicalFormat(c) === want) : undefined;
}
