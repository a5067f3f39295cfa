/**
 * Real font files for text rendering (Pango through sharp, SVG, PDF). Text tools name a family; this module
 * turns it into a file on disk from the Debian font packages (fonts-dejavu, fonts-liberation, fonts-noto),
 * so output never depends on whatever fontconfig happens to pick as a fallback.
 *
 *   fontFile('DejaVu Sans', 'bold')      → { family: 'DejaVu Sans', file: '/usr/share/fonts/…/DejaVuSans-Bold.ttf', … }
 *   fontFile('sans-serif')               → DejaVu Sans (generic names and common proprietary names are aliased)
 *   listFontFamilies()                   → every family found, with the styles it has
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { KilnError } from '../core/errors.js';

export type FontWeight = 'regular' | 'bold';
export type FontStyle = 'normal' | 'italic';
type Variant = 'regular' | 'bold' | 'italic' | 'boldItalic';

export interface FontFamily {
  /** The family name as the font file declares it (what Pango and fontconfig match). */
  family: string;
  files: Partial<Record<Variant, string>>;
}

export interface ResolvedFont {
  family: string;
  file: string;
  weight: FontWeight;
  style: FontStyle;
}

/** Where Debian puts the packaged fonts; KILN_FONT_DIRS (colon-separated) adds more. */
export function fontDirs(): string[] {
  const extra = (process.env.KILN_FONT_DIRS ?? '').split(':').filter(Boolean);
  return [...extra, '/usr/share/fonts/truetype/dejavu', '/usr/share/fonts/truetype/liberation', '/usr/share/fonts/truetype/noto'];
}

/** Generic CSS names and widespread proprietary names → an installed metric-compatible or look-alike family. */
const ALIASES: Record<string, string[]> = {
  'sans-serif': ['DejaVu Sans', 'Liberation Sans', 'Noto Sans'],
  sans: ['DejaVu Sans', 'Liberation Sans', 'Noto Sans'],
  serif: ['DejaVu Serif', 'Liberation Serif', 'Noto Serif'],
  monospace: ['DejaVu Sans Mono', 'Liberation Mono', 'Noto Sans Mono'],
  mono: ['DejaVu Sans Mono', 'Liberation Mono'],
  arial: ['Liberation Sans'],
  helvetica: ['Liberation Sans'],
  'times new roman': ['Liberation Serif'],
  times: ['Liberation Serif'],
  'courier new': ['Liberation Mono'],
  courier: ['Liberation Mono'],
  'arial narrow': ['Liberation Sans Narrow'],
};

// File stems whose family name cannot be derived by splitting CamelCase ("DejaVu" is one word).
const KNOWN_STEMS: Record<string, string> = {
  DejaVuSans: 'DejaVu Sans',
  DejaVuSansMono: 'DejaVu Sans Mono',
  DejaVuSansCondensed: 'DejaVu Sans Condensed',
  DejaVuSerif: 'DejaVu Serif',
  DejaVuSerifCondensed: 'DejaVu Serif Condensed',
};

const STYLE_SUFFIX: Record<string, Variant> = {
  '': 'regular',
  Regular: 'regular',
  Book: 'regular',
  Bold: 'bold',
  Italic: 'italic',
  Oblique: 'italic',
  BoldItalic: 'boldItalic',
  BoldOblique: 'boldItalic',
};

let cache: Map<string, FontFamily> | undefined;

function scan(): Map<string, FontFamily> {
  if (cache) return cache;
  const map = new Map<string, FontFamily>();
  for (const dir of fontDirs()) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const m = /^([A-Za-z0-9]+?)(?:-([A-Za-z]+))?\.(ttf|otf)$/.exec(name);
      if (!m) continue;
      const variant = STYLE_SUFFIX[m[2] ?? ''];
      if (!variant) continue; // ExtraLight, Condensed-Light… are not offered as separate families
      const family = KNOWN_STEMS[m[1]!] ?? m[1]!.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
      const key = family.toLowerCase();
      const entry = map.get(key) ?? { family, files: {} };
      entry.files[variant] ??= path.join(dir, name);
      map.set(key, entry);
    }
  }
  cache = map;
  return map;
}

/** Every installed family with at least a regular face, sorted by name. */
export function listFontFamilies(): FontFamily[] {
  return [...scan().values()].filter((f) => f.files.regular).sort((a, b) => a.family.localeCompare(b.family));
}

/** Names accepted by fontFile(): the families plus the generic aliases. */
export function fontNames(): string[] {
  return [...Object.keys(ALIASES), ...listFontFamilies().map((f) => f.family)];
}

/**
 * The font file for a family, weight and style. Falls back within the family (bold italic → bold →
 * regular) but never to another family silently: an unknown family is a VALIDATION_ERROR that lists
 * what is installed.
 */
export function fontFile(family: string, weight: FontWeight = 'regular', style: FontStyle = 'normal'): ResolvedFont {
  const fams = scan();
  const wanted = family.trim().toLowerCase();
  const candidates = ALIASES[wanted] ?? [family.trim()];
  for (const c of candidates) {
    const f = fams.get(c.toLowerCase());
    if (!f?.files.regular) continue;
    const order: Variant[] =
      weight === 'bold' && style === 'italic'
        ? ['boldItalic', 'bold', 'italic', 'regular']
        : weight === 'bold'
          ? ['bold', 'regular']
          : style === 'italic'
            ? ['italic', 'regular']
            : ['regular'];
    const v = order.find((o) => f.files[o] && existsSync(f.files[o]!))!;
    return {
      family: f.family,
      file: f.files[v]!,
      weight: v === 'bold' || v === 'boldItalic' ? 'bold' : 'regular',
      style: v === 'italic' || v === 'boldItalic' ? 'italic' : 'normal',
    };
  }
  const some = listFontFamilies()
    .map((f) => f.family)
    .filter((n) => /^(DejaVu|Liberation|Noto (Sans|Serif)( Mono)?$)/.test(n));
  if (some.length === 0) throw new KilnError('ENGINE_MISSING', 'No fonts found; install fonts-dejavu (apt-get install fonts-dejavu-core).');
  throw new KilnError(
    'VALIDATION_ERROR',
    `Unknown font "${family}". Installed: sans-serif, serif, monospace, ${some.join(', ')} (and other Noto families).`,
  );
}
