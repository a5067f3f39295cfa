import { runFfmpeg } from '../../../engines/ffmpeg/run.js';

/** Silences found by silencedetect, in seconds. */
export async function detectSilences(
  input: string,
  durationS: number,
  thresholdDb: number,
  minSilenceS: number,
  opts: { signal?: AbortSignal; onProgress?: (pct: number) => void },
): Promise<{ start: number; end: number }[]> {
  const out: { start: number; end: number }[] = [];
  let start: number | undefined;
  await runFfmpeg(['-i', input, '-vn', '-sn', '-af', `silencedetect=noise=${thresholdDb}dB:d=${minSilenceS}`, '-f', 'null', '-'], {
    signal: opts.signal,
    durationS,
    onProgress: opts.onProgress,
    logLevel: 'info',
    onStderrLine: (line) => {
      const s = /silence_start: (-?[\d.]+)/.exec(line);
      if (s) start = Math.max(0, Number(s[1]));
      const e = /silence_end: ([\d.]+)/.exec(line);
      if (e && start !== undefined) {
        out.push({ start, end: Number(e[1]) });
        start = undefined;
      }
    },
  });
  if (start !== undefined) out.push({ start, end: durationS });
  return out;
}
