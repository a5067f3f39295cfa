/** Worker thread of restore-photo's denoise step: non-local means is seconds of pure CPU, kept off the event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { type NlmOptions, nonLocalMeans } from './denoise-common.js';

export interface DenoiseJob {
  rgb: Uint8Array;
  width: number;
  height: number;
  options: Omit<NlmOptions, 'signal'>;
}

const job = workerData as DenoiseJob;
const rgb = Uint8Array.from(job.rgb);
nonLocalMeans(rgb, job.width, job.height, 3, job.options);
parentPort!.postMessage({ done: true, rgb }, [rgb.buffer as ArrayBuffer]);
