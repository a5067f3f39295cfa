/**
 * Every processing engine kiln can use: how to find it, how to read its version, and which Debian or
 * npm package brings it. `kiln doctor` prints this table; runTool checks a tool's `needs.engines`
 * here before any work starts, so a missing engine fails fast with ENGINE_MISSING.
 */
import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';

export interface EngineDef {
  id: string;
  title: string;
  /** Candidate executables (first found wins); absent for in-process npm engines. */
  bins?: string[];
  versionArgs?: string[];
  /**
   * First capture group is the version; without it the program is not asked (PocketSphinx has no
   * version option: its "ERROR: cmd_ln.c …" line was shown as the version).
   */
  versionPattern?: RegExp;
  /** npm package for in-process engines. */
  npm?: string;
  debian?: string;
  license: string;
  usedFor: string;
}

export const ENGINES: EngineDef[] = [
  { id: 'sharp', title: 'sharp (libvips)', npm: 'sharp', license: 'Apache-2.0 (libvips LGPL-3.0)', usedFor: 'images' },
  {
    id: 'ffmpeg',
    title: 'FFmpeg',
    bins: ['ffmpeg'],
    versionArgs: ['-version'],
    versionPattern: /ffmpeg version (\S+)/,
    debian: 'ffmpeg',
    license: 'GPL-2.0+ (Debian build)',
    usedFor: 'video, audio',
  },
  {
    id: 'ffprobe',
    title: 'FFprobe',
    bins: ['ffprobe'],
    versionArgs: ['-version'],
    versionPattern: /ffprobe version (\S+)/,
    debian: 'ffmpeg',
    license: 'GPL-2.0+ (Debian build)',
    usedFor: 'media probing',
  },
  {
    id: 'qpdf',
    title: 'qpdf',
    bins: ['qpdf'],
    versionArgs: ['--version'],
    versionPattern: /qpdf version (\S+)/,
    debian: 'qpdf',
    license: 'Apache-2.0',
    usedFor: 'PDF structure, pages, encryption',
  },
  {
    id: 'ghostscript',
    title: 'Ghostscript',
    bins: ['gs'],
    versionArgs: ['--version'],
    versionPattern: /^(\S+)/,
    debian: 'ghostscript',
    license: 'AGPL-3.0',
    usedFor: 'PDF compression, grayscale, PDF/A',
  },
  {
    id: 'poppler',
    title: 'Poppler utilities',
    bins: ['pdftoppm'],
    versionArgs: ['-v'],
    versionPattern: /version (\S+)/,
    debian: 'poppler-utils',
    license: 'GPL-2.0',
    usedFor: 'PDF rasterizing and text',
  },
  {
    id: 'mupdf',
    title: 'MuPDF tools',
    bins: ['mutool'],
    versionArgs: ['-v'],
    versionPattern: /version (\S+)/,
    debian: 'mupdf-tools',
    license: 'AGPL-3.0',
    usedFor: 'PDF rendering, redaction',
  },
  {
    id: 'libreoffice',
    title: 'LibreOffice',
    bins: ['soffice', 'libreoffice'],
    versionArgs: ['--version'],
    versionPattern: /LibreOffice (\S+)/,
    debian: 'libreoffice-writer libreoffice-calc libreoffice-impress',
    license: 'MPL-2.0',
    usedFor: 'office documents',
  },
  {
    id: 'chromium',
    title: 'Chromium',
    bins: ['chromium', 'chromium-browser'],
    versionArgs: ['--version'],
    versionPattern: /Chromium (\S+)/,
    debian: 'chromium',
    license: 'BSD-3-Clause',
    usedFor: 'HTML rendering',
  },
  {
    id: 'tesseract',
    title: 'Tesseract OCR',
    bins: ['tesseract'],
    versionArgs: ['--version'],
    versionPattern: /tesseract (\S+)/,
    debian: 'tesseract-ocr',
    license: 'Apache-2.0',
    // Listed for the OCR tools to come; doctor shows it, but nothing needs it yet.
    usedFor: 'OCR (no tool uses it yet)',
  },
  {
    id: 'pandoc',
    title: 'pandoc',
    bins: ['pandoc'],
    versionArgs: ['--version'],
    versionPattern: /pandoc (\S+)/,
    debian: 'pandoc',
    license: 'GPL-2.0+',
    usedFor: 'Markdown, EPUB, DOCX conversion',
  },
  {
    id: 'vips',
    title: 'libvips CLI',
    bins: ['vips'],
    versionArgs: ['--version'],
    versionPattern: /vips-(\S+)/,
    debian: 'libvips-tools',
    license: 'LGPL-2.1+',
    usedFor: 'HEIC/HEIF and JXL output',
  },
  {
    id: 'imagemagick',
    title: 'ImageMagick',
    bins: ['/usr/bin/convert', 'magick'],
    versionArgs: ['-version'],
    versionPattern: /ImageMagick (\S+)/,
    debian: 'imagemagick',
    license: 'ImageMagick (Apache-2.0-like)',
    usedFor: 'EPS output, benchmarks',
  },
  {
    id: 'exiftool',
    title: 'ExifTool',
    bins: ['exiftool'],
    versionArgs: ['-ver'],
    versionPattern: /^(\S+)/,
    debian: 'libimage-exiftool-perl',
    license: 'Artistic/GPL',
    usedFor: 'metadata editing (images, PDF XMP)',
  },
  {
    id: 'potrace',
    title: 'Potrace',
    bins: ['potrace'],
    versionArgs: ['--version'],
    // "potrace 1.16. Copyright (C) …": the full stop ends the sentence, not the version.
    versionPattern: /potrace (\d[\w.]*\w)/,
    debian: 'potrace',
    license: 'GPL-2.0+',
    usedFor: 'vectorizing',
  },
  {
    id: 'zbar',
    title: 'ZBar',
    bins: ['zbarimg'],
    versionArgs: ['--version'],
    versionPattern: /^(\S+)/,
    debian: 'zbar-tools',
    license: 'LGPL-2.1',
    usedFor: 'barcode reading (fallback)',
  },
  {
    id: 'espeak',
    title: 'eSpeak NG',
    bins: ['espeak-ng'],
    versionArgs: ['--version'],
    versionPattern: /text-to-speech: (\S+)/,
    debian: 'espeak-ng',
    license: 'GPL-3.0',
    usedFor: 'test fixtures (speech)',
  },
  {
    id: 'pocketsphinx',
    title: 'PocketSphinx (US English model)',
    bins: ['pocketsphinx_continuous'],
    debian: 'pocketsphinx pocketsphinx-en-us',
    license: 'BSD-2-Clause',
    usedFor: 'speech-to-text fallback for English without the Whisper model (weaker)',
  },
  {
    id: 'sox',
    title: 'SoX',
    bins: ['sox'],
    versionArgs: ['--version'],
    versionPattern: /SoX v(\S+)/,
    debian: 'sox libsox-fmt-mp3',
    license: 'GPL-2.0',
    usedFor: 'audio helpers',
  },
  {
    id: 'ocrmypdf',
    title: 'OCRmyPDF',
    bins: ['ocrmypdf'],
    versionArgs: ['--version'],
    versionPattern: /^(\S+)/,
    debian: 'ocrmypdf',
    license: 'MPL-2.0',
    usedFor: 'searchable PDFs (no tool uses it yet)',
  },
];

export interface EngineStatus {
  id: string;
  title: string;
  available: boolean;
  path?: string;
  version?: string;
  install: string;
  license: string;
  usedFor: string;
}

const cache = new Map<string, Promise<EngineStatus>>();

export function engineDef(id: string): EngineDef {
  const def = ENGINES.find((e) => e.id === id);
  if (!def) throw new Error(`unknown engine ${id}`);
  return def;
}

export function installHint(def: EngineDef): string {
  if (def.npm) return `npm install ${def.npm} (it is a dependency of kiln: run npm ci)`;
  return `apt-get install ${def.debian} (or run: npm run setup)`;
}

async function which(bin: string): Promise<string | undefined> {
  const dirs = bin.includes('/') ? [''] : (process.env.PATH ?? '').split(':').filter(Boolean);
  for (const d of dirs) {
    const p = d ? path.join(d, bin) : bin;
    try {
      await access(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/**
 * npm engines imported by a literal specifier, so that the CLI bundle (scripts/bundle.mjs) sees them and
 * this probe gets the same module instance as the tools instead of loading a second copy of sharp.
 */
const NPM_IMPORTS: Record<string, () => Promise<unknown>> = { sharp: () => import('sharp') };

async function probe(def: EngineDef): Promise<EngineStatus> {
  const base = { id: def.id, title: def.title, install: installHint(def), license: def.license, usedFor: def.usedFor };
  if (def.npm) {
    try {
      const mod = (await (NPM_IMPORTS[def.npm] ?? (() => import(def.npm!)))()) as {
        default?: { versions?: Record<string, string> };
        versions?: Record<string, string>;
      };
      const versions = mod.default?.versions ?? mod.versions;
      return { ...base, available: true, version: versions?.sharp ?? versions?.[def.id] };
    } catch {
      return { ...base, available: false };
    }
  }
  for (const bin of def.bins ?? []) {
    const p = await which(bin);
    if (!p) continue;
    const pattern = def.versionPattern;
    const version = !pattern
      ? undefined
      : await new Promise<string | undefined>((resolve) => {
          execFile(p, def.versionArgs ?? ['--version'], { timeout: 15000 }, (_err, stdout, stderr) => {
            // Another build's wording ("Google Chrome 120.0…"): the first dotted number of its first line;
            // a line without one is no version (an error message, a usage text).
            const text = `${stdout}\n${stderr}`.trim();
            resolve(pattern.exec(text)?.[1] ?? /\d+\.\d[\w.+~:-]*\w|\d+\.\d/.exec(text.split('\n')[0]!)?.[0]);
          });
        });
    return { ...base, available: true, path: p, version };
  }
  return { ...base, available: false };
}

export function engineStatus(id: string): Promise<EngineStatus> {
  let p = cache.get(id);
  if (!p) {
    p = probe(engineDef(id));
    cache.set(id, p);
  }
  return p;
}

const located = new Map<string, Promise<string | undefined>>();

/** Finds the executable (or loads the npm engine) without asking its version: a PATH lookup, no process. */
function locate(def: EngineDef): Promise<string | undefined> {
  let p = located.get(def.id);
  if (!p) {
    p = (async () => {
      if (def.npm) return (await engineStatus(def.id)).available ? def.npm : undefined;
      for (const bin of def.bins ?? []) {
        const found = await which(bin);
        if (found) return found;
      }
      return undefined;
    })();
    located.set(def.id, p);
  }
  return p;
}

/**
 * Path of the engine's executable; throws ENGINE_MISSING with the install command when absent. Runs
 * before every tool run, so it only looks the program up (`<engine> --version` costs up to half a second
 * for ffmpeg or LibreOffice: that is for `kiln doctor`).
 */
export async function requireEngine(id: string): Promise<string> {
  const def = engineDef(id);
  const found = await locate(def);
  if (!found) {
    const install = installHint(def);
    throw new KilnError('ENGINE_MISSING', `${def.title} is not installed. Install it with: ${install}`, {
      details: { engine: id, install },
    });
  }
  return found;
}

export async function allEngineStatus(): Promise<EngineStatus[]> {
  return Promise.all(ENGINES.map((e) => engineStatus(e.id)));
}
