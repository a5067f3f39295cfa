/** Worker thread of content-aware-resize: seam carving is seconds of pure CPU, kept off the event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { carveColumns, transpose, type Plane } from './seam-carve.js';

export interface SeamJob {
  plane: Plane;
  targetWidth: number;
  targetHeight: number;
  sobelThreshold: number;
}

const job = workerData as SeamJob;
let p: Plane = job.plane;
const removeCols = p.width - job.targetWidth;
const removeRows = p.height - job.targetHeight;
const total = Math.max(1, removeCols + removeRows);
let removedColumns: number[] = [];
if (removeCols > 0) {
  const r = carveColumns(p, removeCols, job.sobelThreshold, (d) => parentPort!.postMessage({ progress: d / total }));
  p = r.plane;
  removedColumns = r.removedFirstRow;
}
if (removeRows > 0) {
  const r = carveColumns(transpose(p), removeRows, job.sobelThreshold, (d) =>
    parentPort!.postMessage({ progress: (removeCols + d) / total }),
  );
  p = transpose(r.plane);
}
parentPort!.postMessage({ done: true, width: p.width, height: p.height, rgba: p.rgba, removedColumns }, [p.rgba.buffer as ArrayBuffer]);
