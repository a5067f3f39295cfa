/**
 * convert-video probes its input while ffmpeg starts (issue #17, transcode-video.ts): a silent input
 * still gets no audio stream, progress still counts up against the probed duration, and the probe's
 * refusal is the answer even though ffmpeg was already running. KILN_MAX_PIXELS is lowered for this
 * process (its own file: the limit is read once at load) so a small clip is "too large".
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, it } from 'node:test';

process.env.KILN_MAX_PIXELS = String(320 * 240);
const { tempDir } = await import('../../helpers/fixtures.js');
const { ffprobe, makeVideo, runMedia } = await import('../../helpers/media.js');

const dir = tempDir();
let silent: string;
let large: string;

before(() => {
  silent = makeVideo(dir, 'silent.mkv', { width: 320, height: 240, durationS: 4, audio: false });
  large = makeVideo(dir, 'large.mp4', { width: 640, height: 480, durationS: 1 });
});

describe('convert-video with the probe alongside ffmpeg', () => {
  it('maps no audio for a silent input and reports progress against the probed duration', async () => {
    // VP9 takes a second or two here: long enough for progress lines between start and end.
    const out = await runMedia(dir, 'convert-video', [silent], { format: 'webm' });
    const p = ffprobe(out.path, true);
    assert.deepEqual(
      p.streams.map((s) => s.codec_type),
      ['video'],
    );
    assert.equal(p.streams[0]!.codec_name, 'vp9');
    assert.equal(Number(p.streams[0]!.nb_read_frames), 100);
    assert.ok(Math.abs(Number(p.format.duration) - 4) < 0.1, p.format.duration);
    assert.ok(
      out.progress.some((x) => x > 0 && x < 100),
      `a percent between start and end: ${out.progress.join(',')}`,
    );
    assert.equal(out.progress.at(-1), 100);
  });

  it("answers the probe's LIMIT_EXCEEDED (not ffmpeg's own refusal) and stops ffmpeg", async () => {
    let work = '';
    await assert.rejects(
      runMedia(dir, 'convert-video', [large], { format: 'mp4' }, { workDir: (d) => (work = d) }),
      (e: { code?: string; message?: string }) => e.code === 'LIMIT_EXCEEDED' && /640 × 480/.test(e.message ?? ''),
    );
    const ffmpegs = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.startsWith('ffmpeg') && l.includes(work));
    assert.deepEqual(ffmpegs, [], 'the ffmpeg started alongside the probe is gone');
  });
});
