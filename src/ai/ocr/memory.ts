/**
 * Effective memory for the OCR runtime's install check: the container's cgroup limit when one is set
 * (v2 memory.max, v1 memory.limit_in_bytes), otherwise the host's memory.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

export const OCR_MIN_MEMORY = 4 * 1024 ** 3;

function cgroupLimit(): number | undefined {
  for (const f of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const s = readFileSync(f, 'utf8').trim();
      const n = Number(s);
      // v1 reports "unlimited" as a huge number close to 2^63.
      if (s !== 'max' && Number.isFinite(n) && n > 0 && n < 2 ** 60) return n;
    } catch {}
  }
  return undefined;
}

export function effectiveMemory(): { bytes: number; source: 'cgroup' | 'host' } {
  const limit = cgroupLimit();
  const host = totalmem();
  return limit !== undefined && limit < host ? { bytes: limit, source: 'cgroup' } : { bytes: host, source: 'host' };
}
