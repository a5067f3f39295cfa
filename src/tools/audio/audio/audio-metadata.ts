import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgs } from '../../../engines/ffmpeg/codecs.js';
import { audioFormatOf } from '../../../engines/ffmpeg/containers.js';
import { probe } from '../../../engines/ffmpeg/probe.js';
import { keptCoverArt } from '../../../engines/ffmpeg/streams.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudio } from '../_shared/audio-input.js';
import { sourceKbps } from '../_shared/transcode-audio.js';

const KEYS = ['title', 'artist', 'album'] as const;

export default defineTool({
  id: 'audio-metadata',
  section: 'audio',
  group: 'audio',
  summary: 'Strip or set title, artist and album tags.',
  description:
    'The audio is copied untouched. strip removes every tag (and cover art) first; title, artist and album are then written. The resulting tags are returned, as read back from the file.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    strip: z.boolean().default(false).describe('Remove all existing tags first.'),
    title: z.string().max(500).optional().describe('Title tag.'),
    artist: z.string().max(500).optional().describe('Artist tag.'),
    album: z.string().max(500).optional().describe('Album tag.'),
  }),
  check: (s) => {
    if (!s.strip && KEYS.every((k) => s[k] === undefined)) return 'audio-metadata needs strip or at least one of title, artist, album.';
  },
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['song.mp3 --title "Intro" --artist "Kiln" -o tagged.mp3', 'song.mp3 --strip -o clean.mp3'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const format = audioFormatOf(input.type?.ext);
    // Same container: copy the audio bit for bit. A video file given here becomes audio of the matching format (re-encoded).
    const copy = format === input.type?.ext;
    // strip removes the cover art too; otherwise it stays wherever the format holds it.
    const cover = s.strip ? { args: ['-vn'], dropped: [] } : keptCoverArt(info, format);
    const maps = ['-map', '0:a:0', ...cover.args];
    const meta = s.strip ? ['-map_metadata', '-1', '-map_metadata:s', '-1'] : ['-map_metadata', '0'];
    const tags = KEYS.flatMap((k) => (s[k] !== undefined ? ['-metadata', `${k}=${s[k]}`] : []));
    const codec = copy ? ['-c:a', 'copy'] : audioCodecArgs(format, await sourceKbps(ctx, input, info, format));
    const id3 = format === 'mp3' ? ['-id3v2_version', '3'] : [];
    const out = ctx.out(format);
    await runFfmpeg(['-i', input.path, ...maps, ...codec, ...meta, ...tags, ...id3, ...(s.strip ? ['-fflags', '+bitexact'] : [])], {
      signal: ctx.signal,
      durationS: info.duration,
      onProgress: progressSpan(ctx, 0, 95, 'tagging'),
      output: out,
      requireSamples: true,
    });
    const after = await probe(out, { signal: ctx.signal });
    const all = { ...after.tags, ...(after.audio?.tags ?? {}) };
    delete all.encoder;
    for (const w of cover.dropped) ctx.warn(w);
    return { outputs: [outputFile(out)], data: { tags: all } };
  },
});
