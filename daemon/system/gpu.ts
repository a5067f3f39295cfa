/** GPU detection for diagnostics: a CUDA device shows up as /dev/nvidia0 with the driver loaded. */
import { access } from 'node:fs/promises';

let cached: Promise<{ available: boolean; kind: 'cuda' | null }> | undefined;

export function detectGpu(): Promise<{ available: boolean; kind: 'cuda' | null }> {
  return (cached ??= Promise.all([access('/dev/nvidia0'), access('/proc/driver/nvidia/version')]).then(
    () => ({ available: true, kind: 'cuda' as const }),
    () => ({ available: false, kind: null }),
  ));
}
