import { defineRuntime } from './manifest.js';

/**
 * whisper.cpp through @fugood/whisper.node (MIT, mybigday/whisper.node, releases every few weeks in
 * 2026): a small JS loader and a per-platform N-API addon with whisper.cpp built in (linux-x64: one
 * 2.9 MB `index.node` needing only libc, libstdc++ and libgomp; CPU, no GPU library). Chosen over
 * @napi-rs/whisper (0.0.4, a 26 MB addon, three platforms, no release since) and
 * @kutalia/whisper-node-addon (35 MB tarball carrying Windows/macOS/Vulkan libraries). Only the
 * loader's compiled JS and the linux-x64 addon are extracted; the install script (a check) never runs.
 * On another platform the runtime installs but does not load, and the tools say so.
 */
export default defineRuntime({
  id: 'whisper',
  version: '1.1.3-1',
  title: 'whisper.cpp (@fugood/whisper.node 1.1.3, CPU)',
  licence: 'MIT',
  entry: '@fugood/whisper.node',
  packages: [
    {
      name: '@fugood/whisper.node',
      version: '1.1.3',
      integrity: 'sha512-wiDjBuKUa6ji6HItkW99TwQI3Q4wf7yh0W/xeroJfZLctQrSM+xfUcoY9iH/w7su3gjW5R6z3tTHJPaF468kig==',
      size: 1_723_501,
      include: () => ['package/package.json', 'package/LICENSE', 'package/README.md', 'package/lib/*.js'],
    },
    {
      name: '@fugood/node-whisper-linux-x64',
      version: '1.1.3',
      integrity: 'sha512-hm//o20nioHQ+7s/idIvnYStz+QdN3n9/psbNJdUf7PciV2orpf6OuWwfDBcme22IwgDOSrCYsWDdO0/08pf5w==',
      size: 1_279_405,
    },
  ],
  async init(entry) {
    const m = entry as { loadWhisperModule(variant?: string): Promise<unknown>; toggleNativeLog?(on: boolean): Promise<void> | void };
    const mod = await m.loadWhisperModule('default');
    // Meant to quiet whisper.cpp, but "off" restores its default logger, which writes every model
    // load to stderr. Routing the log into JS instead (toggleNativeLog(true)) aborts the process at
    // exit after a stalled transcription (the addon throws from its log callback during teardown),
    // so the log stays on stderr.
    await m.toggleNativeLog?.(false);
    return mod;
  },
});
