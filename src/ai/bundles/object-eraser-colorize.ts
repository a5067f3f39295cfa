import { defineBundle } from './manifest.js';

/**
 * LaMa inpainting and DDColor colorization as ONNX. Neither ships on npm or in Debian, and neither
 * upstream publishes a digest for its ONNX export that kiln could pin, so both are import-only: an
 * admin makes the archive (docs/AI.md, "object-eraser-colorize") and kiln records the SHA-256 it
 * computed at import. Never an unverified download.
 *
 * - lama-fp32.onnx: LaMa big-lama (Suvorov et al.), Apache-2.0; the Carve/LaMa-ONNX export
 *   (fp32, about 209 MB; image 1×3×512×512 + mask 1×1×512×512 → 1×3×512×512).
 * - ddcolor.onnx: DDColor (Kang et al.), Apache-2.0; an ONNX export of a DDColor checkpoint
 *   (1×3×512×512 grey RGB → 1×2×512×512 a*b*).
 */
export const LAMA_FILE = 'lama-fp32.onnx';
export const DDCOLOR_FILE = 'ddcolor.onnx';

export default defineBundle({
  id: 'object-eraser-colorize',
  version: '1.0.0-1',
  title: 'Object eraser and colorization (LaMa inpainting, DDColor)',
  licence: 'Apache-2.0',
  licenceNote:
    'LaMa (Samsung AI, Apache-2.0) and DDColor (Apache-2.0); installed by import only — no published digest to pin a download to.',
  runtimes: ['onnxruntime'],
  files: [
    {
      name: LAMA_FILE,
      size: null,
      sha256: null,
      source: { kind: 'import' },
      usedBy: ['erase-object (masks beyond the classical limit)', 'ai-canvas-expand tier balanced/high', 'restore-photo scratch fill'],
    },
    {
      name: DDCOLOR_FILE,
      size: null,
      sha256: null,
      source: { kind: 'import' },
      usedBy: ['colorize model auto/ddcolor', 'restore-photo colorize'],
    },
  ],
  tools: ['erase-object', 'ai-canvas-expand', 'colorize'],
});
