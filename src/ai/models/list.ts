/**
 * Every model the host can load, by id. The host imports a model's module only when it is first
 * used, so the worker starts without loading any runtime.
 */
import type { ModelDef } from '../model.js';

type Loader = () => Promise<{ default: ModelDef<never, unknown, unknown> }>;

export const MODELS: Record<string, Loader> = {
  'isnet-fp16': () => import('./isnet.js').then((m) => ({ default: m.isnetFp16 as ModelDef<never, unknown, unknown> })),
  'isnet-quint8': () => import('./isnet.js').then((m) => ({ default: m.isnetQuint8 as ModelDef<never, unknown, unknown> })),
  'ppocr-v4': () => import('./ppocr-v4.js').then((m) => ({ default: m.ppocrV4 as ModelDef<never, unknown, unknown> })),
};
