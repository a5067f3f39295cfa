/**
 * Error messages must not show the server's paths: an engine's stderr names the job's private copy of
 * an input (`/var/lib/kiln/jobs/<id>/in/0-clip.mp4`), which tells a caller where data lives. Every run's
 * failure passes through here once (runTool): each input's path becomes the name the user gave it, and
 * what remains of the run's private directories is cut away.
 */
import { KilnError } from './errors.js';

export interface PathName {
  path: string;
  name: string;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function scrubText(text: string, files: PathName[], dirs: string[]): string {
  let out = text;
  // Longest first, so a file inside a listed directory is named, not cut.
  for (const f of [...files].sort((a, b) => b.path.length - a.path.length)) out = out.split(f.path).join(f.name);
  // Never the root (it would match every slash), and only where a path starts and that directory ends:
  // "/tmp" inside a ZIP entry name "../../../../tmp/x.png", in "/var/tmp" or in "/tmp2" is not the temp
  // dir (the entry name came out as "../../../..x.png").
  const cut = dirs.map((d) => d.replace(/\/+$/, '')).filter(Boolean);
  for (const d of [...new Set(cut)].sort((a, b) => b.length - a.length)) {
    out = out.replace(
      new RegExp(`(?<![\\w.~/-])${escapeRegExp(d)}(?![^/\\s'":,)])(/[^\\s'":,)]*)?`, 'g'),
      (_m, rest: string | undefined) => (rest ? rest.split('/').pop() || 'file' : '(work dir)'),
    );
  }
  return out;
}

function scrubValue(v: unknown, files: PathName[], dirs: string[]): unknown {
  if (typeof v === 'string') return scrubText(v, files, dirs);
  if (Array.isArray(v)) return v.map((x) => scrubValue(x, files, dirs));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrubValue(x, files, dirs)]));
  return v;
}

/** The same error with every path in its message and details replaced (a new KilnError when anything changed). */
export function scrubError(err: KilnError, files: PathName[], dirs: string[]): KilnError {
  const message = scrubText(err.message, files, dirs);
  const details = err.details === undefined ? undefined : scrubValue(err.details, files, dirs);
  if (message === err.message && JSON.stringify(details) === JSON.stringify(err.details)) return err;
  return new KilnError(err.code, message, { details, reason: err.reason, cause: err.cause });
}
