/**
 * Which execution provider runs the models: the CUDA provider when a GPU is visible and the
 * installed runtime carries the CUDA provider library; the CPU otherwise. KILN_AI_DEVICE=cpu forces
 * the CPU (and =cuda refuses to start without a GPU, so a misconfigured server says so).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';

export type Device = 'cpu' | 'cuda';

function cudaProviderPresent(runtimeDir: string): boolean {
  const lib = path.join(
    runtimeDir,
    'node_modules',
    'onnxruntime-node',
    'bin',
    'napi-v6',
    process.platform,
    process.arch,
    'libonnxruntime_providers_cuda.so',
  );
  return existsSync(lib);
}

export function chooseDevice(runtimeId: string, runtimeDir: string, env: NodeJS.ProcessEnv = process.env): Device {
  const want = (env.KILN_AI_DEVICE ?? 'auto').toLowerCase();
  const gpu = existsSync('/dev/nvidia0') || existsSync('/dev/nvidiactl');
  const cuda = runtimeId === 'onnxruntime' && gpu && cudaProviderPresent(runtimeDir);
  if (want === 'cuda' && !cuda) {
    throw new KilnError('FEATURE_INCOMPATIBLE', 'KILN_AI_DEVICE=cuda, but no GPU with the CUDA provider library is available.', {
      reason: 'no-cuda',
    });
  }
  return want !== 'cpu' && cuda ? 'cuda' : 'cpu';
}

/** The provider names a result reports. */
export function providerName(device: Device): string {
  return device === 'cuda' ? 'CUDAExecutionProvider' : 'CPUExecutionProvider';
}
