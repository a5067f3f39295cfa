import { createRequire } from 'node:module';
import path from 'node:path';
import { defineRuntime } from './manifest.js';
import type { TfjsRuntime, TfModule } from './tfjs-types.js';

/**
 * TensorFlow.js core with its WebAssembly backend (the CPU backend as fallback), for models shipped
 * as TF.js weights. tfjs-node is not used: it downloads libtensorflow at install time. Only the
 * CommonJS bundles Node loads (`dist/tf-*.node.js`) and the two single-threaded wasm binaries are
 * extracted; the wasm backend never runs threaded in Node, so the threaded binary is left out.
 *
 * Runtime dependencies, checked against the bundles: tfjs-backend-cpu requires `seedrandom`
 * (pinned here); tfjs-core's bundle inlines `long` and `seedrandom`, and requires `node-fetch` only
 * inside a lazy fallback for fetching URLs when `globalThis.fetch` is missing (never on Node ≥ 18,
 * and kiln loads weights from disk), so neither `long` nor `node-fetch` is installed.
 */
const TF_VERSION = '4.22.0';
const nodeBundle = (name: string) => () => ['package/package.json', `package/dist/tf-${name}.node.js`];

export default defineRuntime({
  id: 'tfjs',
  version: `${TF_VERSION}-1`,
  title: `TensorFlow.js ${TF_VERSION} (WebAssembly)`,
  licence: 'Apache-2.0',
  entry: '@tensorflow/tfjs-core',
  packages: [
    {
      name: '@tensorflow/tfjs-core',
      version: TF_VERSION,
      integrity: 'sha512-LEkOyzbknKFoWUwfkr59vSB68DMJ4cjwwHgicXN0DUi3a0Vh1Er3JQqCI1Hl86GGZQvY8ezVrtDIvqR1ZFW55A==',
      size: 6958161,
      include: nodeBundle('core'),
    },
    {
      name: '@tensorflow/tfjs-backend-cpu',
      version: TF_VERSION,
      integrity: 'sha512-1u0FmuLGuRAi8D2c3cocHTASGXOmHc/4OvoVDENJayjYkS119fcTcQf4iHrtLthWyDIPy3JiPhRrZQC9EwnhLw==',
      size: 1735629,
      include: nodeBundle('backend-cpu'),
    },
    {
      name: '@tensorflow/tfjs-backend-wasm',
      version: TF_VERSION,
      integrity: 'sha512-/IYhReRIp4jg/wYW0OwbbJZG8ON87mbz0PgkiP3CdcACRSvUN0h8rvC0O3YcDtkTQtFWF/tcXq/KlVDyV49wmA==',
      size: 2460748,
      include: () => [...nodeBundle('backend-wasm')(), 'package/dist/tfjs-backend-wasm.wasm', 'package/dist/tfjs-backend-wasm-simd.wasm'],
    },
    {
      name: '@tensorflow/tfjs-converter',
      version: TF_VERSION,
      integrity: 'sha512-PT43MGlnzIo+YfbsjM79Lxk9lOq6uUwZuCc8rrp0hfpLjF6Jv8jS84u2jFb+WpUeuF4K33ZDNx8CjiYrGQ2trQ==',
      size: 4134551,
      include: nodeBundle('converter'),
    },
    {
      name: 'seedrandom',
      version: '3.0.5',
      integrity: 'sha512-8OwmbklUNzwezjGInmZ+2clQmExQPvomqjL7LFqOYqtmuxRgQYqOD3mHaU+MvZn5FLUeVxVfQjwLZW/n/JFuqg==',
      size: 67860,
      include: () => ['package/package.json', 'package/index.js', 'package/seedrandom.js', 'package/lib/*.js'],
    },
  ],
  async init(entry, dir): Promise<TfjsRuntime> {
    const tf = entry as TfModule;
    const req = createRequire(path.join(dir, 'node_modules', 'index.js'));
    req('@tensorflow/tfjs-backend-cpu');
    const wasm = req('@tensorflow/tfjs-backend-wasm') as { setWasmPaths(prefix: string): void };
    // The binaries come from the installed runtime, never from a CDN (the backend's default).
    wasm.setWasmPaths(`${path.join(dir, 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist')}${path.sep}`);
    const want = (process.env.KILN_TFJS_BACKEND ?? 'wasm').toLowerCase();
    let backend: 'wasm' | 'cpu' = 'cpu';
    if (want !== 'cpu') {
      try {
        if (await tf.setBackend('wasm')) backend = 'wasm';
      } catch {
        // The wasm binary failed to load (e.g. no WebAssembly SIMD and no plain binary): the CPU backend works everywhere.
      }
    }
    if (backend === 'cpu') await tf.setBackend('cpu');
    await tf.ready();
    tf.enableProdMode();
    const converter = req('@tensorflow/tfjs-converter') as TfjsRuntime['converter'];
    return { tf, converter, backend };
  },
  provider: (api) => `tfjs-${(api as TfjsRuntime).backend}`,
});
