import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** `$XDG_DATA_HOME/kiln`, else `~/.local/share/kiln`; DATA_DIR / KILN_DATA_DIR override. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KILN_DATA_DIR) return path.resolve(env.KILN_DATA_DIR);
  if (env.DATA_DIR) return path.resolve(env.DATA_DIR);
  const xdg = env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return path.join(xdg, 'kiln');
}

/** Replaces characters that are unsafe in file names and headers; keeps the extension. */
export function safeFileName(name: string, fallback = 'file'): string {
  const base = path.basename(name.replace(/\\/g, '/'));
  const cleaned = base
    .normalize('NFC')
    // C0/C1 controls, and the bidirectional controls: U+202E turned "a<RLO>gnp.exe" into a name shown as
    // "aexe.png" in a browser's download bar or a file manager (a spoofed extension).
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"*/:<>?\\|]/g, '_')
    .replace(/^\.+/, '')
    .trim();
  return fitBytes(cleaned, MAX_NAME_BYTES) || fallback;
}

/**
 * File systems limit a name to 255 bytes, not characters: 120 CJK characters are 360 bytes and failed
 * with ENAMETOOLONG. 200 bytes leaves room for the index prefix and the suffixes tools add.
 */
const MAX_NAME_BYTES = 200;

/** Shortens the stem (whole code points) so the name fits in max UTF-8 bytes; keeps a short extension. */
function fitBytes(name: string, max: number): string {
  if (Buffer.byteLength(name) <= max) return name;
  const ext = path.extname(name);
  const keep = ext && Buffer.byteLength(ext) <= 20 ? ext : '';
  let out = '';
  let bytes = Buffer.byteLength(keep);
  for (const ch of keep ? name.slice(0, -keep.length) : name) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return out + keep;
}

/**
 * The name a library version downloads (and runs) under: the item's current name (after a rename, not
 * the name the version was uploaded under), with the version's own extension when the version is in
 * another format (a converted version of photo.png is photo.webp). Made safe as safeFileName does.
 */
export function versionFileName(itemName: string, versionName: string): string {
  const ext = path.extname(versionName);
  const same = !ext || path.extname(itemName).toLowerCase() === ext.toLowerCase();
  return safeFileName(same ? itemName : `${stem(itemName)}${ext}`, versionName);
}

/** File name without its extension. */
export function stem(name: string): string {
  const b = path.basename(name);
  const ext = path.extname(b);
  return ext && ext !== b ? b.slice(0, -ext.length) : b;
}

/**
 * The real path of `p` (symbolic links resolved), or of its nearest existing ancestor joined with the
 * rest when `p` is not there yet (an output folder created later): where a write to `p` would land.
 */
export function realPath(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  for (let cur = abs; ; cur = path.dirname(cur)) {
    try {
      return path.join(realpathSync(cur), ...rest.reverse());
    } catch {
      if (path.dirname(cur) === cur) return abs;
      rest.push(path.basename(cur));
    }
  }
}
