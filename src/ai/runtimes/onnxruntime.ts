import { defineRuntime } from './manifest.js';

/**
 * onnxruntime-node with its CPU provider. Its install script (which downloads CUDA files and fails
 * offline) never runs: the tarball is extracted, not installed. The CUDA provider is used when its
 * library is present beside the CPU one and a GPU is visible (see host/device.ts).
 */
export default defineRuntime({
  id: 'onnxruntime',
  version: '1.30.0-1',
  title: 'ONNX Runtime 1.30.0 (CPU)',
  licence: 'MIT',
  entry: 'onnxruntime-node',
  packages: [
    {
      name: 'onnxruntime-common',
      version: '1.30.0',
      integrity: 'sha512-7fdVWjAID1dVhH/G8qK3APARunV4VkBFoCQAP7qp4Wkab0mrorvmc+sqiT+mKXOzDqdjN5j+/Z9nb4gzNPWcyA==',
      size: 66795,
    },
    {
      name: 'onnxruntime-node',
      version: '1.30.0',
      integrity: 'sha512-twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw==',
      size: 113507888,
      include: (platform) => {
        const [os, arch] = platform.split('-');
        return ['package/package.json', 'package/README.md', 'package/dist/*', `package/bin/napi-v6/${os}/${arch}/*`];
      },
    },
  ],
});
