import { defineBundle } from './manifest.js';

/**
 * Scratch detection for old photos: the detection network of "Bringing Old Photos Back to Life"
 * (Wan et al., Microsoft, MIT licence) exported to ONNX. Upstream publishes PyTorch checkpoints only
 * (no ONNX, no digest kiln could pin), so the bundle is import-only: an admin exports the network
 * (docs/AI.md, "photo-restoration") and imports the archive; kiln records the SHA-256 it computed.
 *
 * Interface: 1×1×H×W grey, (v/255 − 0.5)/0.5, H and W multiples of 16 (kiln sends 512×512 tiles) →
 * 1×1×H×W logits; a pixel is a scratch where sigmoid(logit) ≥ 0.4, as upstream thresholds it.
 */
export default defineBundle({
  id: 'photo-restoration',
  version: '1.0.0-1',
  title: 'Photo restoration (scratch detection)',
  licence: 'MIT',
  licenceNote: 'Scratch detection from microsoft/Bringing-Old-Photos-Back-to-Life (MIT); installed by import only.',
  runtimes: ['onnxruntime'],
  files: [
    { name: 'scratch-detection.onnx', size: null, sha256: null, source: { kind: 'import' }, usedBy: ['restore-photo scratch detection'] },
  ],
  tools: ['restore-photo'],
});
