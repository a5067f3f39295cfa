/**
 * The model host's worker: loads runtimes and models on first use, keeps them warm, runs
 * predictions off the main thread and drops models unused for the idle time. One per process.
 */
import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { KilnError } from '../../core/errors.js';
import type { ModelDef } from '../model.js';
import { findBundle } from '../bundles/list.js';
import { damagedFiles, importOnly } from '../install/installer.js';
import { MODELS } from '../models/list.js';
import { bundleLink, runtimeLink } from '../paths.js';
import { findRuntime } from '../runtimes/list.js';
import { type AiThreads, aiThreads, shareCores } from '../threads.js';
import { chooseDevice, type Device, providerName } from './device.js';
import type { FromWorker, ToWorker, WireError } from './protocol.js';
import { transferables } from './transfer.js';

const port = parentPort!;
const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

interface Loaded {
  def: ModelDef<unknown, unknown, unknown>;
  state: unknown;
  device: Device;
  provider: string;
  loadMs: number;
  lastUsed: number;
  busy: number;
  /** The install the model's files were read from (the bundle link's target, an immutable store dir). */
  installed: string;
  /** The threads it was loaded to use (onnxruntime fixes them when it opens a session). */
  threads: AiThreads;
}

const runtimes = new Map<string, Promise<{ api: unknown; dir: string; provider?: string }>>();
const models = new Map<string, Promise<Loaded>>();
/** Models whose bundle was reinstalled or re-imported while they were loaded: freed once no run uses them. */
const retired = new Set<Loaded>();
const running = new Map<number, AbortController>();
let idleMs = 300_000;

function loadRuntime(id: string, dataDir: string): Promise<{ api: unknown; dir: string; provider?: string }> {
  const key = `${id}@${dataDir}`;
  let p = runtimes.get(key);
  if (!p) {
    p = (async () => {
      const r = findRuntime(id);
      if (!r) throw new KilnError('INTERNAL', `Unknown runtime ${id}.`);
      const dir = runtimeLink(dataDir, id);
      const req = createRequire(path.join(dir, 'node_modules', 'index.js'));
      let entry: unknown;
      try {
        entry = req(r.entry);
      } catch (e) {
        throw new KilnError('FEATURE_NOT_INSTALLED', `The ${r.title} runtime could not be loaded: ${(e as Error).message}`, {
          reason: 'runtime-load',
        });
      }
      const api = r.init ? await r.init(entry, dir) : entry;
      return { api, dir, provider: r.provider?.(api) };
    })();
    p.catch(() => runtimes.delete(key));
    runtimes.set(key, p);
  }
  return p;
}

/** Where a bundle's link points now: a reinstall or an import switches it to a new store dir. */
function installedDir(dataDir: string, bundle: string): Promise<string> {
  return realpath(bundleLink(dataDir, bundle)).catch(() => '');
}

/**
 * The model warm if it was loaded from the bundle's current install. After a reinstall or an import
 * (e.g. an admin replacing gfpgan-v1.4.onnx) the old session would keep answering until idle, so it
 * is retired and the new files are loaded.
 */
async function loadModel(id: string, dataDir: string): Promise<{ entry: Loaded; warm: boolean }> {
  const key = `${id}@${dataDir}`;
  for (let p = models.get(key); p; p = models.get(key)) {
    const l = await p;
    if (l.installed === (await installedDir(dataDir, l.def.bundle))) return { entry: l, warm: true };
    if (models.get(key) === p) {
      models.delete(key);
      retired.add(l);
    }
  }
  const loaded = (async () => {
    const loader = MODELS[id];
    if (!loader) throw new KilnError('INTERNAL', `Unknown model ${id}.`);
    const def = (await loader()).default as ModelDef<unknown, unknown, unknown>;
    const t0 = performance.now();
    const rt = await loadRuntime(def.runtime, dataDir);
    const device = chooseDevice(def.runtime, rt.dir);
    const installed = await installedDir(dataDir, def.bundle);
    const threads = aiThreads();
    const state = await def
      .load({
        file: (name) => path.join(installed || bundleLink(dataDir, def.bundle), name),
        runtime: rt.api,
        device,
      })
      .catch(async (e: unknown) => {
        if (e instanceof KilnError) throw e;
        // Removed (or replaced) while this run read it: the files are gone, not damaged.
        if (!installed || (await installedDir(dataDir, def.bundle)) !== installed) throw bundleGone(def);
        throw await modelLoadFailed(def, installed, e);
      });
    const provider = rt.provider ?? providerName(device);
    return {
      def,
      state,
      device,
      provider,
      loadMs: Math.round(performance.now() - t0),
      lastUsed: Date.now(),
      busy: 0,
      installed,
      threads,
    };
  })();
  loaded.catch(() => models.delete(key));
  models.set(key, loaded);
  return { entry: await loaded, warm: false };
}

/**
 * The runtime could not open a model's file (not a network at all, truncated, another format): an
 * imported file is not checked against a digest before it loads, and an installed one can be damaged
 * on disk. Said as FEATURE_INCOMPATIBLE naming the file and what replaces it, not as an internal
 * error; the file's size and SHA-256 against the install's record (read only now, on this failure:
 * hundreds of MB) tell a damaged copy from a file the runtime cannot use.
 */
async function modelLoadFailed(def: ModelDef<unknown, unknown, unknown>, installed: string, e: unknown): Promise<KilnError> {
  const files = findBundle(def.bundle)?.files.filter((f) => def.files.includes(f.name)) ?? [];
  const imported = files.some(importOnly);
  const cause = ((e as Error)?.message ?? String(e)).split('\n')[0]!.trim().replace(/\.+$/, '');
  const damaged = await damagedFiles(installed, { names: def.files, digests: true }).catch(() => []);
  const how = damaged.map((f) =>
    f.found === null
      ? `${f.name} is gone`
      : f.digestMismatch
        ? `${f.name} is not the file installed (its SHA-256 differs from the one recorded)`
        : `${f.name} is ${f.found} bytes, ${f.size} installed`,
  );
  const remedy = imported
    ? 'Import a good copy: `kiln features import FILE`, or as an admin POST /api/v1/admin/features/import (docs/AI.md).'
    : `Install the bundle again: \`kiln features remove ${def.bundle}\`, then \`kiln features install ${def.bundle}\`.`;
  const what = `The ${imported ? 'imported ' : ''}${def.files.join(', ')} (${def.bundle} bundle)`;
  return new KilnError(
    'FEATURE_INCOMPATIBLE',
    damaged.length
      ? `${what} is damaged on disk: ${how.join('; ')} (loading it failed: ${cause}). ${remedy}`
      : `${what} could not be loaded: ${cause}. ${remedy}`,
    { reason: 'model-load', details: { bundle: def.bundle, files: def.files, model: def.id, damaged: damaged.map((f) => f.name) } },
  );
}

/** The bundle was removed or reinstalled while the model was being read: install (or run) again. */
function bundleGone(def: ModelDef<unknown, unknown, unknown>): KilnError {
  return new KilnError(
    'FEATURE_NOT_INSTALLED',
    `The ${def.bundle} bundle was removed or replaced while this run was reading ${def.files.join(', ')}. ` +
      `Install it with \`kiln features install ${def.bundle}\`, or as an admin with POST /api/v1/admin/features/${def.bundle}/install, and run again.`,
    {
      reason: 'bundle-removed',
      details: {
        missingBundles: [def.bundle],
        install: { cli: `kiln features install ${def.bundle}`, http: `POST /api/v1/admin/features/${def.bundle}/install` },
      },
    },
  );
}

function wire(e: unknown): WireError {
  if (e instanceof KilnError) return { code: e.code, message: e.message, reason: e.reason, details: e.details };
  return { message: (e as Error)?.message ?? String(e) };
}

async function run(m: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const abort = new AbortController();
  running.set(m.id, abort);
  let entry: Loaded | undefined;
  const lingering: Promise<unknown>[] = [];
  try {
    const r = await loadModel(m.model, m.dataDir);
    entry = r.entry;
    const warm = r.warm;
    entry.busy++;
    const t0 = performance.now();
    const output = await entry.def.predict(entry.state, m.input, {
      signal: abort.signal,
      progress: (fraction, stage) => post({ type: 'progress', id: m.id, fraction, stage }),
      linger: (work) => lingering.push(work),
    });
    const info = {
      model: m.model,
      device: entry.device,
      provider: entry.provider,
      warm,
      loadMs: warm ? 0 : entry.loadMs,
      runMs: Math.round(performance.now() - t0),
      threads: entry.threads,
    };
    post({ type: 'result', id: m.id, output, info }, transferables(output));
  } catch (e) {
    post({ type: 'error', id: m.id, error: wire(e) });
  } finally {
    // The caller has its answer; native work the prediction left running ends before the model
    // counts as free (no sweep disposes it) and before the host may stop this worker.
    await Promise.allSettled(lingering);
    // 'done' lets the process exit (the host unreferences this worker). A binding's promise settles
    // inside its completion callback, and the microtasks that follow run before that callback has
    // returned into the addon; posted from them, 'done' let a CLI whose run had already failed exit
    // and tear this thread down under whisper.cpp's completion: "terminate called after throwing an
    // instance of 'Napi::Error'", exit 134 (seen 1 run in 8 of the watchdog test under load). A turn
    // of the event loop later the callback has returned.
    await new Promise((resolve) => setImmediate(resolve));
    if (entry) {
      entry.busy--;
      entry.lastUsed = Date.now();
    }
    running.delete(m.id);
    post({ type: 'done', id: m.id });
  }
}

async function sweep(): Promise<void> {
  const now = Date.now();
  for (const l of retired) {
    if (l.busy) continue;
    retired.delete(l);
    await l.def.dispose?.(l.state).catch(() => {});
  }
  for (const [key, p] of models) {
    const l = await p.catch(() => undefined);
    if (l && !l.busy && now - l.lastUsed >= idleMs) {
      models.delete(key);
      await l.def.dispose?.(l.state).catch(() => {});
    }
  }
}

setInterval(() => void sweep(), 5_000).unref();

port.on('message', (m: ToWorker) => {
  if (m.type === 'run') void run(m);
  else if (m.type === 'cancel') running.get(m.id)?.abort();
  else if (m.type === 'settings') {
    idleMs = m.idleMs;
    shareCores(m.sharedWith);
  } else if (m.type === 'stats') {
    void Promise.all([...models.keys()].map((k) => k.split('@')[0]!)).then((loaded) => post({ type: 'stats', id: m.id, loaded }));
  }
});
