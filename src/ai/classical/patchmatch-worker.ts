/** Worker thread of the classical inpainting: PatchMatch is seconds of pure CPU, kept off the event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { type FillImage, inpaintPatchMatch, type PatchMatchOptions } from './patchmatch.js';

export interface PatchMatchJob {
  image: FillImage;
  options: Omit<PatchMatchOptions, 'progress' | 'shouldStop'>;
}

const job = workerData as PatchMatchJob;
const rgb = inpaintPatchMatch(job.image, { ...job.options, progress: (f) => parentPort!.postMessage({ progress: f }) });
parentPort!.postMessage({ done: true, rgb }, [rgb.buffer as ArrayBuffer]);
