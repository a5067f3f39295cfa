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
    .replace(/[\u0000-\u001f\u007f"*/:<>?\\|]/g, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 200);
  return cleaned || fallback;
}

/** File name without its extension. */
export function stem(name: string): string {
  const b = path.basename(name);
  const ext = path.extname(b);
  return ext && ext !== b ? b.slice(0, -ext.length) : b;
}
