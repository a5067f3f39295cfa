import type { InputSpec } from '../../../core/tool.js';

/** A video and its subtitle file (burn-subtitles, embed-subtitles): the subtitles come as the second part `file`. */
export const VIDEO_AND_SUBTITLES: InputSpec = {
  kind: 'file',
  accept: ['video/*'],
  extra: [
    {
      field: 'file',
      flag: 'subtitles',
      accept: ['subtitle/*'],
      required: true,
      description: 'Subtitle file: SRT, VTT, ASS or SSA (second file part)',
    },
  ],
};
