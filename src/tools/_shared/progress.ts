import type { RunContext } from '../../core/tool.js';

/** ctx.progress restricted to the part [from, to] of the whole run (for multi-pass tools). */
export function progressSpan(ctx: RunContext, from: number, to: number, stage: string): (pct: number) => void {
  return (pct) => ctx.progress(from + ((to - from) * pct) / 100, stage);
}
