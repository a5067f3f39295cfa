/** What the installed ffmpeg build can do (filters, encoders), for the tools that need optional parts and `kiln doctor`. */
import { exec } from '../../core/process.js';

export interface FfmpegCapabilities {
  filters: Set<string>;
  encoders: Set<string>;
  vidstab: boolean;
  rubberband: boolean;
  libass: boolean;
  drawtext: boolean;
  /** zscale (libzimg) and tonemap: HDR video to SDR pictures. */
  tonemap: boolean;
}

let capsPromise: Promise<FfmpegCapabilities> | undefined;

/** Filters and encoders of the installed ffmpeg build (cached for the process). */
export function ffmpegCapabilities(): Promise<FfmpegCapabilities> {
  capsPromise ??= (async () => {
    const list = async (what: string) => {
      const r = await exec('ffmpeg', ['-hide_banner', what], { timeoutMs: 20_000 }).catch(() => undefined);
      const names = new Set<string>();
      for (const line of (r?.stdout ?? '').split('\n')) {
        const m = /^\s*[A-Z.|]{3,6}\s+(\S+)\s/.exec(line);
        if (m) names.add(m[1]!);
      }
      return names;
    };
    const [filters, encoders] = await Promise.all([list('-filters'), list('-encoders')]);
    return {
      filters,
      encoders,
      vidstab: filters.has('vidstabdetect') && filters.has('vidstabtransform'),
      rubberband: filters.has('rubberband'),
      libass: filters.has('subtitles'),
      drawtext: filters.has('drawtext'),
      tonemap: filters.has('zscale') && filters.has('tonemap'),
    };
  })();
  return capsPromise;
}

/** Lines for `kiln doctor` about optional parts of the ffmpeg build. */
export async function ffmpegDoctorNotes(): Promise<string[]> {
  const c = await ffmpegCapabilities();
  if (c.filters.size === 0) return [];
  const notes: string[] = [];
  if (!c.vidstab)
    notes.push(
      'FFmpeg build lacks vidstab (vidstabdetect/vidstabtransform): stabilize-video is unavailable. Install a build with libvidstab (Debian: ffmpeg).',
    );
  if (!c.rubberband)
    notes.push('FFmpeg build lacks rubberband: pitch-shift falls back to asetrate+atempo, video-speed keepPitch to atempo.');
  if (!c.libass) notes.push('FFmpeg build lacks libass (subtitles filter): burn-subtitles is unavailable.');
  if (!c.tonemap) notes.push('FFmpeg build lacks zscale (libzimg) or tonemap: GIFs, WebPs and frames of HDR video come out washed out.');
  if (!c.drawtext) notes.push('FFmpeg build lacks drawtext (libfreetype): watermark-video is unavailable.');
  return notes;
}
