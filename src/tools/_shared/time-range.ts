/** Start/end settings of the tools that cut a part of a recording, checked against each other and the input. */
import { KilnError } from '../../core/errors.js';
import type { MediaInfo } from '../../engines/ffmpeg/probe.js';

/** Settings shared by trim tools: endS must come after startS. */
export function checkRange(s: { startS: number; endS: number }): string | void {
  if (s.endS <= s.startS) return 'endS must be greater than startS.';
}

/** A start beyond the end of the input is a bad request, not an empty output. */
export function requireStartInside(info: MediaInfo, startS: number): void {
  if (info.duration > 0 && startS >= info.duration) {
    throw new KilnError('VALIDATION_ERROR', `startS (${startS} s) is at or beyond the end of the input (${info.duration.toFixed(2)} s).`, {
      details: [{ path: 'startS', message: 'beyond the end of the input' }],
    });
  }
}

/** Duration limit checked before any work (LIMIT_EXCEEDED). */
export function requireMaxDuration(info: MediaInfo, maxS: number, what: string): void {
  if (info.duration > maxS) {
    throw new KilnError('LIMIT_EXCEEDED', `${what} is ${info.duration.toFixed(1)} s long; the limit is ${maxS} s.`, {
      details: { durationS: info.duration, limitS: maxS },
    });
  }
}

/**
 * Seconds of the clip a cutting tool takes from `startS`: to `endS`, or `durationS` long, and never past
 * the end of the input (when its length is known). A start beyond the end is refused first.
 */
export function clipLength(info: MediaInfo, startS: number, to: { endS: number } | { durationS: number }): number {
  requireStartInside(info, startS);
  if ('endS' in to) return Math.min(to.endS, info.duration || to.endS) - startS;
  return Math.min(to.durationS, (info.duration || startS + to.durationS) - startS);
}
