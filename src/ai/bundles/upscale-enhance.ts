import type { NpmPin } from '../runtimes/manifest.js';
import { type BundleFile, defineBundle } from './manifest.js';

/**
 * Super-resolution, face restoration and neural denoising.
 *
 * - Super-resolution: the RDN networks UpscalerJS publishes as "ESRGAN slim" and "ESRGAN medium"
 *   (MIT, idealo's image-super-resolution RDN trained on DIV2K; Keras layers models converted to
 *   TF.js: model.json + one weights shard per scale). Only the x2/x3/x4 model files are taken from the
 *   tarballs (x8 is outside upscale's 2–4 and "thick" is 110 MB); none of the packages' code is used:
 *   kiln runs the networks on tfjs-core ops (src/ai/models/esrgan.ts).
 * - Face restoration: GFPGAN v1.4 (Apache-2.0, TencentARC) as ONNX, 1×3×512×512 in and out. No ONNX
 *   export is published with a digest anywhere these machines reach, so the file is `import` only:
 *   an admin imports an archive holding it and kiln records its digest. CodeFormer is not shipped:
 *   its licence (S-Lab 1.0) forbids commercial use.
 * - Denoising: a fully convolutional RGB denoiser as ONNX, 1×3×H×W in 0–1 out 0–1 (e.g. SCUNet,
 *   Apache-2.0, or NAFNet-SIDD, MIT), published upstream only: `import` likewise.
 *
 * `kiln features install upscale-enhance` installs the npm files; the two `import` files are listed
 * as missing with the tools that need them until an archive supplies them.
 */
const SLIM: NpmPin = {
  name: '@upscalerjs/esrgan-slim',
  version: '1.0.0',
  integrity: 'sha512-DXtwn5SE71+pZKluN/hGeLaZv6ZylyFQYSvMqU08kKCEA5Y9Q1cIIk4EvPTPZw8VqGi2C6F02c8OjhtId4BK2w==',
  size: 4357056,
};

const MEDIUM: NpmPin = {
  name: '@upscalerjs/esrgan-medium',
  version: '1.0.0',
  integrity: 'sha512-Z8JnR87sgetPABKevasXST3FdnXhaoTu9zpXnu3KLaHYpYStVt0FD1VZS9c6jhSGMBC0H929gN9RbWl+MeisKA==',
  size: 11361705,
};

/** Bundle file names of one super-resolution network: its topology and its weights. */
export const esrganFiles = (variant: 'slim' | 'medium', scale: number) => ({
  topology: `esrgan-${variant}-x${scale}.json`,
  weights: `esrgan-${variant}-x${scale}.bin`,
});

type Pinned = Record<2 | 3 | 4, [bytes: number, sha256: string]>;

/** The pinned members of each tarball, per scale: `x<scale>/model.json` and its one weights shard. */
const NETWORKS: { variant: 'slim' | 'medium'; pin: NpmPin; topology: Pinned; weights: Pinned }[] = [
  {
    variant: 'slim',
    pin: SLIM,
    topology: {
      2: [12336, '8efb488c2caed0196a6163e3f06798f9245e92623ffd50654a26c372e09150ea'],
      3: [12336, '642208758cf6c42a4f88745894b45cc03776681a46027b85963f01fe003e9917'],
      4: [12336, '3a2eaa642232567e7d2a2e7638c9704f42f63f355fc656c18aa78bf2da1d903d'],
    },
    weights: {
      2: [888300, '5cb464ae4d390ce0a771afd5feaf60fbfcdb18ab48a56db98cdf6b88202369de'],
      3: [907260, '9d344609abd1e29bd3924f9c4e9ffaa1aee6be7c3586bab0f52863597858a2ba'],
      4: [933804, '82637daaf3ba024df5e9da2389e8992e7a6e8a992ba6268ce6bc490c92e9516e'],
    },
  },
  {
    variant: 'medium',
    pin: MEDIUM,
    topology: {
      2: [30051, '197b99be1f385b9f7914ecd8fd6e9ebf65833859807aae90666188dbc39cbf93'],
      3: [30051, 'fcf99e8e6b98b19e496d4ceb9d381b0d1236a6e62fbc3952eedf70b9596d8a8a'],
      4: [30051, '6abcf2a497bb361a9b75afbab390a2bc0df88236c7b7c96edc1c2cdbdbec8e3c'],
    },
    weights: {
      2: [2772940, '6a210f30f209192bad4650ea4f619adadbd36228e998aa49a4195c6e7ec70761'],
      3: [2791900, 'e164821f4251957f5037fb93d1e9a719c17d4346e102bf24d8e8fb60757df48b'],
      4: [2818444, 'ed791214e78e498dd42ce5da0e16b78a1047732e5d99467aaead2a90cb566a69'],
    },
  },
];

const member = (tarball: NpmPin, path: string, name: string, size: number, sha256: string): BundleFile => ({
  name,
  size,
  sha256,
  source: { kind: 'npm', tarball, members: [`package/models/${path}`] },
});

const esrgan: BundleFile[] = NETWORKS.flatMap(({ variant, pin, topology, weights }) =>
  ([2, 3, 4] as const).flatMap((scale) => {
    const names = esrganFiles(variant, scale);
    return [
      member(pin, `x${scale}/model.json`, names.topology, ...topology[scale]),
      member(pin, `x${scale}/group1-shard1of1.bin`, names.weights, ...weights[scale]),
    ];
  }),
);

export const GFPGAN_FILE = 'gfpgan-v1.4.onnx';
export const DENOISE_FILE = 'denoise.onnx';

export default defineBundle({
  id: 'upscale-enhance',
  version: '1.0.0-1',
  title: 'Upscaling and enhancement (ESRGAN/RDN super-resolution; GFPGAN and a denoiser by import)',
  licence: 'MIT AND Apache-2.0',
  licenceNote:
    'Super-resolution weights from @upscalerjs/esrgan-slim and -medium (MIT). GFPGAN v1.4 (Apache-2.0) and the denoiser (SCUNet Apache-2.0 / NAFNet MIT) are installed by import only. CodeFormer is not offered: its S-Lab licence forbids commercial use.',
  runtimes: ['tfjs', 'onnxruntime'],
  files: [
    ...esrgan,
    { name: GFPGAN_FILE, size: null, sha256: null, source: { kind: 'import' }, usedBy: ['enhance-faces', 'upscale faceEnhance'] },
    {
      name: DENOISE_FILE,
      size: null,
      sha256: null,
      source: { kind: 'import' },
      usedBy: ['noise-removal tier balanced/quality/maximum', 'upscale denoise', 'image-enhancement deepEnhance'],
    },
  ],
  tools: ['upscale', 'noise-removal', 'enhance-faces', 'image-enhancement'],
});
