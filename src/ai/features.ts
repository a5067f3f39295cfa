/**
 * What an admin sees of the feature bundles: every bundle of the spec with its state (missing,
 * queued, installing with bytes, installed with version and size, failed with the reason), its
 * tools, licence and runtimes. Used by `GET /api/v1/admin/features`, `kiln features` and doctor.
 */
import { KilnError } from '../core/errors.js';
import { findBundle } from './bundles/list.js';
import { BUNDLE_IDS } from './bundles/manifest.js';
import {
  type DamagedFile,
  damagedFiles,
  downloadsOf,
  importOnly,
  isBundleCurrent,
  isRuntimeInstalled,
  missingImports,
} from './install/installer.js';
import { linkOf, readInstalled } from './install/layout.js';
import type { InstallQueue } from './install/queue.js';
import { ARCHIVE_INDEX } from './install/archive.js';

export type FeatureState = 'missing' | 'queued' | 'installing' | 'installed' | 'damaged' | 'failed' | 'unavailable';

export interface FeatureStatus {
  id: string;
  title: string;
  state: FeatureState;
  /** The version this kiln installs. */
  version?: string;
  /** Bytes to download for a fresh install (runtimes included). */
  downloadBytes?: number;
  installed?: { version: string; bytes: number; installedAt: string; via: 'download' | 'import'; current: boolean };
  progress?: { bytesDone: number; bytesTotal: number; stage?: string };
  error?: { message: string; reason?: string };
  /** State `damaged`: the installed files no longer on disk at the size the install recorded (`found` null: gone). */
  damaged?: DamagedFile[];
  licence?: string;
  licenceNote?: string;
  tools: string[];
  runtimes: { id: string; installed: boolean }[];
  /**
   * Files with no verifiable download (installed only from an imported archive), each installed
   * (with the digest recorded at import) or missing, and the tools or settings that need it. A bundle
   * is `installed` without them; those tools answer FEATURE_NOT_INSTALLED naming the import.
   */
  imports?: { file: string; state: 'installed' | 'missing'; usedBy: string[]; sha256?: string; install: string }[];
  /** The OCR runtime only: the active generation and every kept one. */
  generation?: {
    id: string;
    release: string;
    keyId: string;
    runtime: unknown;
    models: unknown[];
    all: { id: string; active: boolean; leases: number }[];
  };
}

async function statusOf(dataDir: string, id: string, queue?: InstallQueue): Promise<FeatureStatus> {
  // The OCR runtime is installed as signed generations, not as a bundle (src/ai/ocr/).
  if (id === 'ocr') return (await import('./ocr/status.js')).ocrStatus(dataDir);
  const b = findBundle(id);
  if (!b)
    return {
      id,
      title: id,
      state: 'unavailable',
      tools: [],
      runtimes: [],
      error: { message: 'No pinned source for this bundle in this version of kiln.', reason: 'not-available' },
    };
  const { runtimes, bytes } = downloadsOf(b);
  const rt = await Promise.all(runtimes.map(async (r) => ({ id: r.id, installed: await isRuntimeInstalled(dataDir, r) })));
  const rec = await readInstalled(dataDir, 'bundle', b.id);
  const current = (await isBundleCurrent(dataDir, b)) && rt.every((r) => r.installed);
  const q = queue?.entry(b.id);
  const damaged = current ? await damagedFiles(linkOf(dataDir, 'bundle', b.id)) : [];
  const state: FeatureState = q ? q.state : current ? (damaged.length ? 'damaged' : 'installed') : 'missing';
  return {
    id: b.id,
    title: b.title,
    state,
    version: b.version,
    downloadBytes: bytes,
    ...(rec && {
      installed: { version: rec.version, bytes: rec.bytes, installedAt: rec.installedAt, via: rec.via, current: rec.version === b.version },
    }),
    ...(q?.state === 'installing' && { progress: { bytesDone: q.bytesDone, bytesTotal: q.bytesTotal, stage: q.stage } }),
    ...(q?.state === 'queued' && { progress: { bytesDone: 0, bytesTotal: q.bytesTotal } }),
    ...(q?.error && { error: q.error }),
    ...(state === 'damaged' && { error: damagedError(b.id, damaged), damaged }),
    licence: b.licence,
    licenceNote: b.licenceNote,
    tools: b.tools,
    runtimes: rt,
    ...(b.files.some(importOnly) && { imports: await importsOf(dataDir, b) }),
  };
}

/** What an admin reads of a bundle whose files were cut short or removed on disk since the install. */
function damagedError(id: string, damaged: DamagedFile[]): { message: string; reason: string } {
  const files = damaged.map((f) => `${f.name} ${f.found === null ? 'is gone' : `is ${f.found} bytes, ${f.size} installed`}`);
  return {
    message: `Damaged on disk: ${files.join('; ')}. Install it again: \`kiln features install ${id}\`, or as an admin POST /api/v1/admin/features/${id}/install.`,
    reason: 'damaged',
  };
}

async function importsOf(dataDir: string, b: NonNullable<ReturnType<typeof findBundle>>): Promise<NonNullable<FeatureStatus['imports']>> {
  const missing = new Set((await missingImports(dataDir, b)).map((f) => f.name));
  const rec = await readInstalled(dataDir, 'bundle', b.id);
  return b.files.filter(importOnly).map((f) => {
    const sha256 = missing.has(f.name) ? undefined : rec?.files?.find((x) => x.name === f.name)?.sha256;
    return {
      file: f.name,
      state: missing.has(f.name) ? ('missing' as const) : ('installed' as const),
      usedBy: f.usedBy ?? b.tools,
      ...(sha256 && { sha256 }),
      install: `kiln features import FILE (an archive with ${ARCHIVE_INDEX} and files/${f.name}), or POST /api/v1/admin/features/import`,
    };
  });
}

export async function listFeatures(dataDir: string, queue?: InstallQueue): Promise<FeatureStatus[]> {
  return Promise.all(BUNDLE_IDS.map((id) => statusOf(dataDir, id, queue)));
}

export async function featureStatus(dataDir: string, id: string, queue?: InstallQueue): Promise<FeatureStatus> {
  if (!(BUNDLE_IDS as readonly string[]).includes(id))
    throw new KilnError('NOT_FOUND', `No feature bundle ${id}; bundles: ${BUNDLE_IDS.join(', ')}.`);
  return statusOf(dataDir, id, queue);
}

/** The bundles of `needed` that are not installed and current (with their runtimes). */
export async function missingBundles(dataDir: string, needed: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of needed) {
    const b = findBundle(id);
    const ok =
      b &&
      (await isBundleCurrent(dataDir, b)) &&
      (await Promise.all(downloadsOf(b).runtimes.map((r) => isRuntimeInstalled(dataDir, r)))).every(Boolean);
    if (!ok) out.push(id);
  }
  return out;
}

/**
 * Import-only files (`bundle/file`) a whole tool needs (its id in the file's `usedBy`) that are not
 * imported, for bundles that are otherwise installed: with one missing the tool is not available.
 */
export async function missingToolFiles(dataDir: string, toolId: string, needed: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of needed) {
    const b = findBundle(id);
    if (!b || !(await isBundleCurrent(dataDir, b))) continue;
    for (const f of await missingImports(dataDir, b)) if (f.usedBy?.includes(toolId)) out.push(`${id}/${f.name}`);
  }
  return out;
}
