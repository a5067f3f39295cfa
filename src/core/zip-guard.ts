/**
 * Office files, ODF files and EPUBs are ZIP containers. Before an engine sees one, we walk it ourselves:
 * a ZIP bomb (a few KiB that inflate to gigabytes) or an archive of a million entries would otherwise
 * tie up LibreOffice or pandoc far past any time-out. Declared sizes are checked first (cheap), then
 * every entry is really inflated and counted, because declared sizes can lie.
 */
import yauzl from 'yauzl';
import { KilnError } from './errors.js';

export interface ZipLimits {
  /** Sum of all uncompressed entries, bytes. */
  maxTotalBytes: number;
  /** Largest single entry, bytes. */
  maxEntryBytes: number;
  maxEntries: number;
  /** Largest uncompressed/compressed ratio, applied to entries above 1 MiB (tiny XML parts compress very well). */
  maxRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxTotalBytes: Number(process.env.KILN_ZIP_MAX_BYTES) || 1024 * 1024 * 1024,
  maxEntryBytes: Number(process.env.KILN_ZIP_MAX_ENTRY_BYTES) || 512 * 1024 * 1024,
  maxEntries: Number(process.env.KILN_ZIP_MAX_ENTRIES) || 20_000,
  maxRatio: Number(process.env.KILN_ZIP_MAX_RATIO) || 200,
};

/** The part every valid container of a kind must have. */
const REQUIRED_PART: Record<string, RegExp> = {
  docx: /^word\/document\.xml$/,
  xlsx: /^xl\/workbook\.xml$/,
  pptx: /^ppt\/presentation\.xml$/,
  odt: /^content\.xml$/,
  ods: /^content\.xml$/,
  odp: /^content\.xml$/,
  epub: /^META-INF\/container\.xml$/,
};

/** Sees the inflated bytes of the parts it names as the guard reads them (one pass over the archive). */
export interface ZipTap {
  part: RegExp;
  data(chunk: Buffer): void;
}

export interface ZipSummary {
  entries: number;
  totalBytes: number;
  names: string[];
}

/**
 * Throws LIMIT_EXCEEDED for bombs and oversized parts, UNSUPPORTED_INPUT for a corrupt archive or one
 * that lacks the part its kind requires. `kind` is a sniffed extension (docx, xlsx, odt, epub, …).
 */
export async function guardZip(
  file: string,
  kind?: string,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
  signal?: AbortSignal,
  tap?: ZipTap | ZipTap[],
): Promise<ZipSummary> {
  const taps = tap ? (Array.isArray(tap) ? tap : [tap]) : [];
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
      err ? reject(corrupt(err)) : resolve(z),
    ),
  );
  const names: string[] = [];
  let total = 0;
  try {
    if (zip.entryCount > limits.maxEntries) throw tooMany(zip.entryCount, limits);
    await new Promise<void>((resolve, reject) => {
      const fail = (e: unknown) => {
        reject(e);
      };
      zip.on('error', (e) => fail(corrupt(e)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        if (signal?.aborted) return fail(new KilnError('CANCELLED', 'The run was cancelled.'));
        names.push(entry.fileName);
        if (names.length > limits.maxEntries) return fail(tooMany(names.length, limits));
        const declared = entry.uncompressedSize;
        if (declared > limits.maxEntryBytes) return fail(bomb(`part ${entry.fileName} would inflate to ${declared} bytes`, limits));
        if (total + declared > limits.maxTotalBytes)
          return fail(bomb(`the parts would inflate to more than ${limits.maxTotalBytes} bytes`, limits));
        if (declared > 1024 * 1024 && declared / Math.max(1, entry.compressedSize) > limits.maxRatio) {
          return fail(
            bomb(`part ${entry.fileName} has a compression ratio of ${Math.round(declared / Math.max(1, entry.compressedSize))}:1`, limits),
          );
        }
        if (/\/$/.test(entry.fileName)) {
          zip.readEntry();
          return;
        }
        zip.openReadStream(entry, (err, stream) => {
          if (err) return fail(corrupt(err));
          let seen = 0;
          const tapped = taps.filter((t) => t.part.test(entry.fileName));
          stream.on('data', (chunk: Buffer) => {
            for (const t of tapped) t.data(chunk);
            seen += chunk.length;
            total += chunk.length;
            if (seen > limits.maxEntryBytes || total > limits.maxTotalBytes) {
              stream.destroy();
              fail(bomb(`part ${entry.fileName} inflates past the limit`, limits));
            }
          });
          stream.on('error', (e) => fail(corrupt(e)));
          stream.on('end', () => zip.readEntry());
        });
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  const need = kind ? REQUIRED_PART[kind] : undefined;
  if (need && !names.some((n) => need.test(n))) {
    throw new KilnError(
      'UNSUPPORTED_INPUT',
      `The file is a ZIP archive but not a valid ${kind!.toUpperCase()} (a required part is missing).`,
    );
  }
  return { entries: names.length, totalBytes: total, names };
}

function corrupt(e: unknown): KilnError {
  if (e instanceof KilnError) return e;
  return new KilnError('UNSUPPORTED_INPUT', `The file is corrupt: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

function bomb(what: string, limits: ZipLimits): KilnError {
  return new KilnError('LIMIT_EXCEEDED', `The document is too large once unpacked: ${what}.`, { details: { limits } });
}

function tooMany(n: number, limits: ZipLimits): KilnError {
  return new KilnError('LIMIT_EXCEEDED', `The document has too many parts (${n}, at most ${limits.maxEntries}).`, { details: { limits } });
}

/** Sniffed extensions that are ZIP containers and need guardZip before an engine reads them. */
export function isZipContainer(ext: string | undefined): boolean {
  return !!ext && ['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub', 'zip'].includes(ext);
}
