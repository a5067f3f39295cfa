import type { RuntimeManifest } from './manifest.js';
import onnxruntime from './onnxruntime.js';
import tfjs from './tfjs.js';
import whisper from './whisper.js';

export const RUNTIMES: RuntimeManifest[] = [onnxruntime, tfjs, whisper];

export function findRuntime(id: string): RuntimeManifest | undefined {
  return RUNTIMES.find((r) => r.id === id);
}
