/**
 * The types runTool sniffed from the bytes of a run's input files, by path, while the run lasts, so an
 * engine handed only paths can use them (ffmpeg names its demuxer instead of probing: a file that
 * passed as WAV is opened as WAV, never as a playlist or a concat list that happens to probe higher).
 */
import path from 'node:path';
import type { FileKind } from './sniff.js';

type Kind = Pick<FileKind, 'ext' | 'mime'>;

const kinds = new Map<string, { kind: Kind; runs: number }>();

export function rememberKind(p: string, kind: Kind): void {
  const key = path.resolve(p);
  const e = kinds.get(key);
  kinds.set(key, { kind, runs: (e?.runs ?? 0) + 1 });
}

export function forgetKind(p: string): void {
  const key = path.resolve(p);
  const e = kinds.get(key);
  if (e && e.runs > 1) e.runs--;
  else kinds.delete(key);
}

/** The sniffed type of an input of a running tool, or undefined for any other path. */
export function sniffedKind(p: string): Kind | undefined {
  return kinds.get(path.resolve(p))?.kind;
}
