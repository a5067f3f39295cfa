/** Worker thread of colorization's per-pixel L*a*b* pass (seconds of CPU on a large photo), off the event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { type RecolorJob, recolorJob } from './recolor.js';

const rgb = recolorJob(workerData as RecolorJob);
parentPort!.postMessage({ done: true, rgb }, [rgb.buffer as ArrayBuffer]);
