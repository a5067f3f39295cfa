import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { duration, ffprobe, makeAudio, runMedia, stream } from '../../helpers/media.js';

const dir = tempDir();
const audio = (p: string) => stream(ffprobe(p), 'audio')!;
const _isCode = (code: string, reason?: string) => (e: KilnError) =>
  e.code === code && (reason === undefined || (e.details as { reason?: string } | undefined)?.reason === reason);

describe('audio inputs at the edges of what encoders take', () => {
  it('writes OGG Vorbis at any sample rate, channel count and bitrate in range', async () => {
    // libvorbis's managed-bitrate mode refuses most of these ("encoder setup failed").
    for (const [rate, channels, bitrateKbps] of [
      [8000, 1, 192],
      [192000, 2, 192],
      [44100, 1, 320],
      [44100, 2, 32],
    ] as const) {
      const src = makeAudio(dir, `v${rate}-${channels}-${bitrateKbps}.wav`, { rate, channels, durationS: 0.5 });
      const r = await runMedia(dir, 'convert-audio', [src], { format: 'ogg', bitrateKbps });
      assert.equal(audio(r.path).codec_name, 'vorbis');
      assert.equal(audio(r.path).channels, channels);
      assert.ok(Math.abs(duration(r.path) - 0.5) < 0.05, `${rate} Hz: ${duration(r.path)} s`);
    }
  });
});
