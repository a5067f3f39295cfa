import { defineBundle } from './manifest.js';

/**
 * Face detection (SSD MobileNet v1, trained on WIDER FACE) and 68-point face landmarks, as TF.js
 * weights (uint8-quantized, with their weights manifests) from the MIT-licensed npm package
 * @vladmandic/face-api. Only the four model files are taken: the package's code (which bundles its
 * own TensorFlow.js) is not used; kiln runs both networks on the tfjs runtime (src/ai/models/).
 */
const FACE_API = {
  name: '@vladmandic/face-api',
  version: '1.7.15',
  integrity: 'sha512-WDMmK3CfNLo8jylWqMoQgf4nIst3M0fzx1dnac96wv/dvMTN4DxC/Pq1DGtduDk1lktCamQ3MIDXFnvrdHTXDw==',
  size: 12677476,
};

const file = (name: string, size: number, sha256: string) => ({
  name,
  size,
  sha256,
  source: { kind: 'npm' as const, tarball: FACE_API, members: [`package/model/${name}`] },
});

export default defineBundle({
  id: 'face-detection',
  version: '1.7.15-1',
  title: 'Face detection and landmarks (SSD MobileNet v1, 68-point landmarks)',
  licence: 'MIT',
  licenceNote: 'Model weights from @vladmandic/face-api (MIT); none of its code is used.',
  runtimes: ['tfjs'],
  files: [
    file('ssd_mobilenetv1_model-weights_manifest.json', 28233, '888f744dffbc84f5f060d1f8427d9742341943a2dfaaf9205d10029b7e7a2955'),
    file('ssd_mobilenetv1_model.bin', 5616957, '2835640602d53718aa6ae9a42896327eaa21beefed056c218d32ca7d79e1e2f8'),
    file('face_landmark_68_model-weights_manifest.json', 8485, 'ca4886639f86e99b39fed0c155f81b63317225773bd9616716e887b0153389c9'),
    file('face_landmark_68_model.bin', 356840, '4611ef65c87d836d03d684b30eec4d195d8b219fa1dd58fc58945831c6b9299b'),
  ],
  tools: ['blur-faces', 'red-eye-removal', 'smart-crop', 'passport-photo', 'enhance-faces'],
});
