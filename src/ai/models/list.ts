/**
 * Every model the host can load, by id. The host imports a model's module only when it is first
 * used, so the worker starts without loading any runtime.
 */
import type { ModelDef } from '../model.js';

type Loader = () => Promise<{ default: ModelDef<never, unknown, unknown> }>;

export const MODELS: Record<string, Loader> = {
  'isnet-fp16': () => import('./isnet.js').then((m) => ({ default: m.isnetFp16 as ModelDef<never, unknown, unknown> })),
  'isnet-quint8': () => import('./isnet.js').then((m) => ({ default: m.isnetQuint8 as ModelDef<never, unknown, unknown> })),
  'face-ssd-mobilenetv1': () => import('./face-ssd.js') as Promise<{ default: ModelDef<never, unknown, unknown> }>,
  'face-landmarks-68': () => import('./face-landmarks-68.js') as Promise<{ default: ModelDef<never, unknown, unknown> }>,
  'lama-fp32': () => import('./lama.js').then((m) => ({ default: m.lamaFp32 as ModelDef<never, unknown, unknown> })),
  ddcolor: () => import('./ddcolor.js') as Promise<{ default: ModelDef<never, unknown, unknown> }>,
  'scratch-detection': () => import('./scratch-detection.js') as Promise<{ default: ModelDef<never, unknown, unknown> }>,
  ...Object.fromEntries(
    ['slim', 'medium'].flatMap((v) =>
      [2, 3, 4].map((s) => [
        `esrgan-${v}-x${s}`,
        () => import('./esrgan.js').then((m) => ({ default: m.ESRGAN_MODELS[`esrgan-${v}-x${s}`] as ModelDef<never, unknown, unknown> })),
      ]),
    ),
  ),
  gfpgan: () => import('./gfpgan.js') as Promise<{ default: ModelDef<never, unknown, unknown> }>,
  denoise: () => import('./denoise.js') as Promise<{ default: ModelDef<never, unknown, unknown> }>,
  'whisper-base': () => import('./whisper.js').then((m) => ({ default: m.whisperBase as ModelDef<never, unknown, unknown> })),
  'ppocr-v4': () => import('./ppocr-v4.js').then((m) => ({ default: m.ppocrV4 as ModelDef<never, unknown, unknown> })),
};
