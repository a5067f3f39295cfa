/** Worker thread of vectorize's colour mode: imagetracerjs is synchronous and can take seconds. */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

export interface TraceJob {
  width: number;
  height: number;
  rgba: Uint8Array;
  options: Record<string, unknown>;
}

interface ImageTracer {
  imagedataToSVG(img: { width: number; height: number; data: Uint8ClampedArray }, options: Record<string, unknown>): string;
}

const job = workerData as TraceJob;
// The package is CommonJS without types.
const tracer = createRequire(import.meta.url)('imagetracerjs') as ImageTracer;
const svg = tracer.imagedataToSVG(
  { width: job.width, height: job.height, data: new Uint8ClampedArray(job.rgba.buffer, job.rgba.byteOffset, job.rgba.byteLength) },
  job.options,
);
parentPort!.postMessage({ svg });
