import backgroundRemoval from './background-removal.js';
import faceDetection from './face-detection.js';
import type { BundleId, BundleManifest } from './manifest.js';
import objectEraserColorize from './object-eraser-colorize.js';
import photoRestoration from './photo-restoration.js';
import transcription from './transcription.js';
import upscaleEnhance from './upscale-enhance.js';

/** Bundles whose files are pinned here; the spec's others are listed as not yet available. */
export const BUNDLES: BundleManifest[] = [
  backgroundRemoval,
  faceDetection,
  upscaleEnhance,
  objectEraserColorize,
  photoRestoration,
  transcription,
];

export function findBundle(id: string): BundleManifest | undefined {
  return BUNDLES.find((b) => b.id === id);
}

export function isBundleId(id: string): id is BundleId {
  return BUNDLES.some((b) => b.id === id);
}
