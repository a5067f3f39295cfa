/**
 * The signed release index of the OCR runtime (ocr-runtime-index.json): what one release is, byte for
 * byte — the archive's compressed and extracted sizes and SHA-256 digests, every file's path, size,
 * digest and mode, the models' digests — and an Ed25519 signature over all of it (canonical JSON:
 * keys sorted, no spaces, the `signature` member left out). kiln trusts the public key it ships in
 * release/ and the keys an admin names in KILN_OCR_TRUSTED_KEYS (PEM files, comma-separated).
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { KilnError } from '../../core/errors.js';

export const INDEX_FILE = 'ocr-runtime-index.json';
export const INDEX_FORMAT = 'kiln-ocr-runtime-index/1';

export interface IndexFile {
  /** Relative path inside the generation. */
  path: string;
  size: number;
  sha256: string;
  /** 0o644 or 0o755, as a number. */
  mode: number;
}

/** How the archive is rebuilt on a machine that reaches only the npm registry. */
export interface NpmRecipe {
  name: string;
  version: string;
  integrity: string;
  size: number;
  /** Tar member (under `package/`) → path in the generation. */
  members: { from: string; to: string }[];
}

export interface ReleaseIndex {
  format: typeof INDEX_FORMAT;
  /** The release's version, e.g. '2026.11.0'. */
  release: string;
  /** `linux-x64` etc.: the platform the archive's native files are for. */
  platform: string;
  createdAt: string;
  archive: {
    /** File name of the archive beside the index (content-addressed). */
    file: string;
    bytes: number;
    sha256: string;
    /** The uncompressed tar. */
    extractedBytes: number;
    extractedSha256: string;
  };
  files: IndexFile[];
  models: { id: string; path: string; sha256: string }[];
  runtime: { id: 'onnxruntime'; version: string };
  /** The text the staged smoke test must read back from its rendered image. */
  smokeText: string;
  /** Present when the archive can be assembled from npm tarballs (same bytes, same digest). */
  assemble?: { from: 'npm'; packages: NpmRecipe[] };
  signature?: { algorithm: 'ed25519'; keyId: string; value: string };
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The bytes the signature covers. */
export function signedBytes(index: ReleaseIndex): Buffer {
  const { signature: _omit, ...rest } = index;
  return Buffer.from(canonical(rest), 'utf8');
}

/** Short id of a public key: the first 16 hex digits of the SHA-256 of its SPKI DER. */
export function keyId(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

export function signIndex(index: ReleaseIndex, privateKeyPem: string | Buffer): ReleaseIndex {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519') throw new KilnError('USAGE_ERROR', 'The release key must be an Ed25519 private key (PEM).');
  const value = sign(null, signedBytes(index), key).toString('base64');
  return { ...index, signature: { algorithm: 'ed25519', keyId: keyId(key), value } };
}

/** The key kiln ships (release/ocr-release-key.pub.pem beside the package). */
export const SHIPPED_KEY_FILE = fileURLToPath(new URL('../../../../release/ocr-release-key.pub.pem', import.meta.url));
export const SHIPPED_INDEX_FILE = fileURLToPath(new URL(`../../../../release/${INDEX_FILE}`, import.meta.url));

export function trustedKeys(env: NodeJS.ProcessEnv = process.env): KeyObject[] {
  const files = (env.KILN_OCR_TRUSTED_KEYS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (env.KILN_OCR_TRUST_SHIPPED_KEY !== '0') files.unshift(SHIPPED_KEY_FILE);
  const keys: KeyObject[] = [];
  for (const f of files) {
    try {
      keys.push(createPublicKey(readFileSync(f)));
    } catch (e) {
      if (f !== SHIPPED_KEY_FILE)
        throw new KilnError('VALIDATION_ERROR', `KILN_OCR_TRUSTED_KEYS: ${f} is not a readable public key (${(e as Error).message}).`);
    }
  }
  return keys;
}

function refuse(message: string, reason: string): KilnError {
  return new KilnError('UNSUPPORTED_INPUT', message, { reason });
}

const HEX64 = /^[0-9a-f]{64}$/;

/** A path inside the generation: relative, normalised, no `..`, no empty or dot segments. */
export function safePath(p: string): boolean {
  if (typeof p !== 'string' || !p || p.length > 400 || p.startsWith('/') || p.includes('\\') || p.includes('\0')) return false;
  return p.split('/').every((s) => s && s !== '.' && s !== '..');
}

/** Parses and checks an index: trusted signature first, then its shape (paths, modes, digests). */
export function verifyIndex(text: string, keys: KeyObject[]): ReleaseIndex {
  let index: ReleaseIndex;
  try {
    index = JSON.parse(text) as ReleaseIndex;
  } catch {
    throw refuse(`${INDEX_FILE} is not JSON.`, 'index-malformed');
  }
  if (!index || typeof index !== 'object' || index.format !== INDEX_FORMAT)
    throw refuse(`${INDEX_FILE} is not a kiln OCR runtime index (${INDEX_FORMAT}).`, 'index-malformed');
  const sig = index.signature;
  if (sig?.algorithm !== 'ed25519' || typeof sig.value !== 'string')
    throw refuse('The OCR runtime index carries no Ed25519 signature.', 'signature-missing');
  const key = keys.find((k) => keyId(k) === sig.keyId);
  if (!key)
    throw refuse(
      `The OCR runtime index is signed by key ${sig.keyId}, which this kiln does not trust (KILN_OCR_TRUSTED_KEYS).`,
      'untrusted-key',
    );
  if (!verify(null, signedBytes(index), key, Buffer.from(sig.value, 'base64')))
    throw refuse('The OCR runtime index signature does not verify: the index was changed after signing.', 'bad-signature');
  const a = index.archive;
  if (
    !a ||
    !HEX64.test(a.sha256) ||
    !HEX64.test(a.extractedSha256) ||
    !Number.isSafeInteger(a.bytes) ||
    !Number.isSafeInteger(a.extractedBytes) ||
    !/^[\w.-]+$/.test(a.file)
  )
    throw refuse('The OCR runtime index describes its archive incompletely.', 'index-malformed');
  const seen = new Set<string>();
  for (const f of index.files ?? []) {
    if (!safePath(f.path)) throw refuse(`The OCR runtime index names an unsafe path: ${JSON.stringify(f.path)}.`, 'unsafe-path');
    if (seen.has(f.path)) throw refuse(`The OCR runtime index names ${f.path} twice.`, 'index-malformed');
    seen.add(f.path);
    if (f.mode !== 0o644 && f.mode !== 0o755)
      throw refuse(`The OCR runtime index gives ${f.path} the mode ${f.mode.toString(8)} (only 644 and 755 are allowed).`, 'bad-mode');
    if (!HEX64.test(f.sha256) || !Number.isSafeInteger(f.size) || f.size < 0)
      throw refuse(`The OCR runtime index describes ${f.path} incompletely.`, 'index-malformed');
  }
  if (!seen.size) throw refuse('The OCR runtime index lists no files.', 'index-malformed');
  for (const m of index.models ?? []) {
    const f = index.files.find((x) => x.path === m.path);
    if (!f || f.sha256 !== m.sha256)
      throw refuse(`The OCR runtime index's model ${m.id} does not match its file list.`, 'model-digest-mismatch');
  }
  return index;
}

export async function readIndexFile(file: string, keys: KeyObject[]): Promise<ReleaseIndex> {
  return verifyIndex(await readFile(file, 'utf8'), keys);
}
