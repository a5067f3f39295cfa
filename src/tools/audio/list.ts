/** The audio tools of the catalog, one line each (docs/DEVELOPING.md, "Adding a tool"). */
export { default as audioChannels } from './audio/audio-channels.js';
export { default as audioMetadata } from './audio/audio-metadata.js';
export { default as audioSpeed } from './audio/audio-speed.js';
export { default as convertAudio } from './audio/convert-audio.js';
export { default as fadeAudio } from './audio/fade-audio.js';
export { default as mergeAudio } from './audio/merge-audio.js';
export { default as noiseReduction } from './audio/noise-reduction.js';
export { default as normalizeAudio } from './audio/normalize-audio.js';
export { default as pitchShift } from './audio/pitch-shift.js';
export { default as reverseAudio } from './audio/reverse-audio.js';
export { default as ringtoneMaker } from './audio/ringtone-maker.js';
export { default as silenceRemoval } from './audio/silence-removal.js';
export { default as splitAudio } from './audio/split-audio.js';
export { default as trimAudio } from './audio/trim-audio.js';
export { default as volumeAdjust } from './audio/volume-adjust.js';
export { default as waveformImage } from './audio/waveform-image.js';
export { default as transcribeAudio } from './audio/transcribe-audio.js';
