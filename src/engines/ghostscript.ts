/**
 * Ghostscript (AGPL-3.0), only ever run as a separate program: it rewrites whole PDFs through its
 * pdfwrite device (compression, grayscale, PDF/A-2b). -dSAFER keeps it from touching other files.
 */
import { access, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';

const GS_TIMEOUT_MS = 300_000;

export interface GsOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Called with the page number Ghostscript is on ("Page N" lines). */
  onPage?: (page: number) => void;
  /** The input's name as the user knows it, put in error messages instead of the path on disk. */
  name?: string;
}

/** pdfwrite from `input` to `output` with extra device parameters; `post` is PostScript run before the input. */
export async function pdfwrite(input: string, output: string, params: string[], o: GsOptions & { post?: string[] } = {}): Promise<void> {
  const gs = await requireEngine('ghostscript');
  const args = [
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-sDEVICE=pdfwrite',
    `-sOutputFile=${output}`,
    ...params,
    ...(o.post ?? []),
    '-f',
    input,
  ];
  try {
    await exec(gs, args, {
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? GS_TIMEOUT_MS,
      failCode: 'UNSUPPORTED_INPUT',
      onStdoutLine: (l) => {
        const m = /^Page (\d+)/.exec(l);
        if (m) o.onPage?.(Number(m[1]));
      },
    });
  } catch (e) {
    if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT') {
      const msg = e.message
        .split(input)
        .join(o.name ?? 'the PDF')
        .split(output)
        .join('the output');
      throw new KilnError('UNSUPPORTED_INPUT', `Ghostscript could not process ${o.name ?? 'the PDF'}: ${msg.replace(/^gs failed /, '')}`, {
        details: e.details,
      });
    }
    throw e;
  }
}

/**
 * Compression parameters for a quality of 1-100: image resolution from 50 dpi (1) to 300 dpi (100)
 * and a JPEG quantisation factor from 2.4 (1) to 0.1 (100). Text and vectors stay vector.
 */
export function compressionParams(quality: number): { params: string[]; post: string[]; dpi: number } {
  const q = Math.max(1, Math.min(100, quality));
  const dpi = Math.round(50 + ((q - 1) * 250) / 99);
  const qfactor = +(2.4 - ((q - 1) * 2.3) / 99).toFixed(2);
  const params = [
    '-dCompatibilityLevel=1.6',
    '-dDetectDuplicateImages=true',
    '-dCompressFonts=true',
    '-dSubsetFonts=true',
    '-dDownsampleColorImages=true',
    '-dDownsampleGrayImages=true',
    '-dDownsampleMonoImages=true',
    '-dColorImageDownsampleType=/Bicubic',
    '-dGrayImageDownsampleType=/Bicubic',
    `-dColorImageResolution=${dpi}`,
    `-dGrayImageResolution=${dpi}`,
    `-dMonoImageResolution=${Math.max(dpi * 2, 150)}`,
    // Downsample anything above the target (the default threshold of 1.5 skips images only slightly larger).
    '-dColorImageDownsampleThreshold=1.0',
    '-dGrayImageDownsampleThreshold=1.0',
    // Ghostscript copies JPEG images through untouched by default, so quality would only act where
    // images are also downsampled; re-encode them so the QFactor applies to every photo.
    '-dPassThroughJPEGImages=false',
    // Without it the distiller parameters set by -c below are undone after the first page.
    '-dNOOUTERSAVE',
    '-dPassThroughJPXImages=false',
    '-dAutoFilterColorImages=false',
    '-dAutoFilterGrayImages=false',
    '-dColorImageFilter=/DCTEncode',
    '-dGrayImageFilter=/DCTEncode',
  ];
  const dict = `<< /QFactor ${qfactor} /Blend 1 /HSamples [2 1 1 2] /VSamples [2 1 1 2] >>`;
  const post = ['-c', `<< /ColorImageDict ${dict} /GrayImageDict ${dict} >> setdistillerparams`];
  return { params, post, dpi };
}

export const GRAYSCALE_PARAMS = [
  '-sColorConversionStrategy=Gray',
  '-dProcessColorModel=/DeviceGray',
  '-dOverrideICC=true',
  '-dCompatibilityLevel=1.6',
];

/** Ghostscript's own resource directory (…/ghostscript/<version>/), found once. */
async function gsShareDir(): Promise<string | undefined> {
  const root = '/usr/share/ghostscript';
  const names = await readdir(root).catch(() => [] as string[]);
  for (const n of names.sort().reverse()) {
    const d = path.join(root, n);
    if (
      await access(path.join(d, 'iccprofiles')).then(
        () => true,
        () => false,
      )
    )
      return d;
  }
  return undefined;
}

/** An sRGB ICC profile for the PDF/A output intent: the system's sRGB.icc, else Ghostscript's own default_rgb.icc (sRGB). */
export async function srgbProfile(): Promise<string> {
  const share = await gsShareDir();
  const candidates = [
    '/usr/share/color/icc/sRGB.icc',
    '/usr/share/color/icc/ghostscript/srgb.icc',
    ...(share ? [path.join(share, 'iccprofiles', 'srgb.icc'), path.join(share, 'iccprofiles', 'default_rgb.icc')] : []),
  ];
  for (const c of candidates)
    if (
      await access(c).then(
        () => true,
        () => false,
      )
    )
      return c;
  throw new KilnError(
    'ENGINE_MISSING',
    'No sRGB ICC profile found for the PDF/A output intent (install ghostscript or icc-profiles-free).',
  );
}

/**
 * PDF/A-2b through pdfwrite: a PDFA definition file (Ghostscript's PDFA_def.ps, rewritten to point at
 * the sRGB profile) adds the OutputIntent and the XMP identification; colours are converted to RGB and
 * all fonts are embedded (-dEmbedAllFonts, the 14 standard fonts substituted by embedded URW clones).
 */
export async function toPdfA2b(input: string, output: string, workDir: string, o: GsOptions = {}): Promise<void> {
  const icc = await srgbProfile();
  const ps = (s: string) => '(' + s.replace(/[\\()]/g, (c) => '\\' + c) + ')';
  const def = path.join(workDir, 'PDFA_def.ps');
  await writeFile(
    def,
    [
      '%!',
      `/ICCProfile ${ps(icc)} def`,
      '[/_objdef {icc_PDFA} /type /stream /OBJ pdfmark',
      '[{icc_PDFA} << /N 3 >> /PUT pdfmark',
      '[{icc_PDFA} ICCProfile (r) file /PUT pdfmark',
      '[/_objdef {OutputIntent_PDFA} /type /dict /OBJ pdfmark',
      '[{OutputIntent_PDFA} <<',
      '  /Type /OutputIntent /S /GTS_PDFA1',
      '  /DestOutputProfile {icc_PDFA}',
      '  /OutputConditionIdentifier (sRGB IEC61966-2.1) /Info (sRGB IEC61966-2.1)',
      '>> /PUT pdfmark',
      '[{Catalog} << /OutputIntents [ {OutputIntent_PDFA} ] >> /PUT pdfmark',
      '',
    ].join('\n'),
  );
  await pdfwrite(
    input,
    output,
    [
      '-dPDFA=2',
      '-dPDFACompatibilityPolicy=1',
      '-sColorConversionStrategy=RGB',
      '-sProcessColorModel=DeviceRGB',
      '-dEmbedAllFonts=true',
      '-dSubsetFonts=true',
      '-dNOOUTERSAVE',
      `--permit-file-read=${icc}`,
      `--permit-file-read=${def}`,
      def,
    ],
    o,
  );
}
