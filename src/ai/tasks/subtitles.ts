/** Transcript segments as plain text, SubRip and WebVTT. */

export interface Segment {
  /** Seconds from the start of the input. */
  start: number;
  end: number;
  text: string;
}

function stamp(s: number, sep: ',' | '.'): string {
  const ms = Math.max(0, Math.round(s * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const sec = Math.floor(ms / 1000) % 60;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(sec)}${sep}${pad(ms % 1000, 3)}`;
}

/** Segments ready for cues: text trimmed, empty ones dropped, each ending after it starts and not after the next starts. */
export function cueable(segments: Segment[]): Segment[] {
  const out = segments
    .map((s) => ({ start: s.start, end: s.end, text: s.text.replace(/\s+/g, ' ').trim() }))
    .filter((s) => s.text)
    .sort((a, b) => a.start - b.start);
  for (let i = 0; i < out.length; i++) {
    const s = out[i]!;
    const next = out[i + 1];
    if (next && s.end > next.start) s.end = Math.max(s.start, next.start);
    if (s.end <= s.start) s.end = s.start + 0.001;
  }
  return out;
}

export function toSrt(segments: Segment[]): string {
  return cueable(segments)
    .map((s, i) => `${i + 1}\n${stamp(s.start, ',')} --> ${stamp(s.end, ',')}\n${s.text}\n`)
    .join('\n');
}

export function toVtt(segments: Segment[]): string {
  const cues = cueable(segments).map((s) => `${stamp(s.start, '.')} --> ${stamp(s.end, '.')}\n${s.text.replace(/-->/g, '->')}\n`);
  return `WEBVTT\n\n${cues.join('\n')}`;
}

export function toText(segments: Segment[]): string {
  const text = cueable(segments)
    .map((s) => s.text)
    .join(' ');
  return text ? `${text}\n` : '';
}

export function formatTranscript(segments: Segment[], format: 'txt' | 'srt' | 'vtt'): string {
  return format === 'srt' ? toSrt(segments) : format === 'vtt' ? toVtt(segments) : toText(segments);
}
