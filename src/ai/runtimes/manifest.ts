/**
 * An inference runtime is a set of npm packages pinned by version and the registry's integrity string,
 * extracted into `<runtime>/node_modules/`. It is installed with the first bundle that needs it and
 * shared by every bundle after; the plain CLI and daemon never carry it (`npm ci` stays small).
 */
import type { RuntimeId } from '../model.js';

export interface NpmPin {
  name: string;
  version: string;
  /** The registry's `dist.integrity` (sha512, base64). */
  integrity: string;
  /** Tarball size in bytes (progress and a first check). */
  size: number;
  /**
   * Members to extract (tar paths under `package/`, `*` wildcards): a runtime keeps only what this
   * platform loads, e.g. onnxruntime-node's 288 MB shrink to its 45 MB linux-x64 library. Default: all.
   */
  include?: (platform: string) => string[];
}

export interface RuntimeManifest {
  id: RuntimeId;
  /** Bumped whenever a pin changes: an installed runtime of another version is replaced. */
  version: string;
  title: string;
  licence: string;
  packages: NpmPin[];
  /** The package the model host requires to get the runtime's API. */
  entry: string;
  /**
   * Runs once in the model host after `entry` is required (e.g. choosing a backend); what it returns
   * is the `runtime` models receive. Default: the entry module itself.
   */
  init?: (entry: unknown, dir: string) => Promise<unknown>;
  /**
   * The provider name results report (`info.provider`), from what `init` returned; default: the
   * device's ONNX Runtime execution provider.
   */
  provider?: (runtime: unknown) => string;
}

export function defineRuntime(m: RuntimeManifest): RuntimeManifest {
  return m;
}

/** `linux-x64` etc.: the platform key runtimes are built for. */
export function platformKey(): string {
  return `${process.platform}-${process.arch}`;
}
