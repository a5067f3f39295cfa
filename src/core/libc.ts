/**
 * glibc's functions through koffi (prebuilt, no install script): node has no FFI of its own. Used for
 * malloc_trim (daemon/system/heap-trim.ts) and posix_spawn (core/posix-spawn.ts). Loaded on the first
 * call, never by a process that needs neither; null where there is no glibc (macOS, musl) or no koffi.
 */
import { createRequire } from 'node:module';

export interface Libc {
  /** The C function of this prototype (koffi's syntax); throws when libc has no such symbol. */
  func(signature: string): (...args: unknown[]) => number;
}

/** undefined: not tried yet. */
let loaded: Libc | null | undefined;

export function libc(): Libc | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.platform !== 'linux') return loaded;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as { load(lib: string): Libc };
    loaded = koffi.load('libc.so.6');
  } catch {
    /* no glibc or no koffi: callers keep their fallback */
  }
  return loaded;
}
