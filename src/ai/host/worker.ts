/**
 * The model host's worker: loads runtimes and models on first use, keeps them warm, runs
 * predictions off the main thread and drops models unused for the idle time. One per process.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { KilnError } from '../../core/errors.js';
import type { ModelDef } from '../model.js';
import { MODELS } from '../models/list.js';
import { bundleLink, runtimeLink } from '../paths.js';
import { findRuntime } from '../runtimes/list.js';
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
}

const runtimes = new Map<string, Promise<{ api: unknown; dir: string; provider?: string }>>();
const models = new Map<string, Promise<Loaded>>();
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

function loadModel(id: string, dataDir: string): { loaded: Promise<Loaded>; warm: boolean } {
  const key = `${id}@${dataDir}`;
  const existing = models.get(key);
  if (existing) return { loaded: existing, warm: true };
  const loaded = (async () => {
    const loader = MODELS[id];
    if (!loader) throw new KilnError('INTERNAL', `Unknown model ${id}.`);
    const def = (await loader()).default as ModelDef<unknown, unknown, unknown>;
    const t0 = performance.now();
    const rt = await loadRuntime(def.runtime, dataDir);
    const device = chooseDevice(def.runtime, rt.dir);
    const dir = bundleLink(dataDir, def.bundle);
    const state = await def.load({ file: (name) => path.join(dir, name), runtime: rt.api, device });
    const provider = rt.provider ?? providerName(device);
    return { def, state, device, provider, loadMs: Math.round(performance.now() - t0), lastUsed: Date.now(), busy: 0 };
  })();
  loaded.catch(() => models.delete(key));
  models.set(key, loaded);
  return { loaded, warm: false };
}

function wire(e: unknown): WireError {
  if (e instanceof KilnError) return { code: e.code, message: e.message, reason: e.reason, details: e.details };
  return { message: (e as Error)?.message ?? String(e) };
}

async function run(m: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const abort = new AbortController();
  running.set(m.id, abort);
  let entry: Loaded | undefined;
  try {
    const { loaded, warm } = loadModel(m.model, m.dataDir);
    entry = await loaded;
    entry.busy++;
    const t0 = performance.now();
    const output = await entry.def.predict(entry.state, m.input, {
      signal: abort.signal,
      progress: (fraction, stage) => post({ type: 'progress', id: m.id, fraction, stage }),
    });
    const info = {
      model: m.model,
      device: entry.device,
      provider: entry.provider,
      warm,
      loadMs: warm ? 0 : entry.loadMs,
      runMs: Math.round(performance.now() - t0),
    };
    post({ type: 'result', id: m.id, output, info }, transferables(output));
  } catch (e) {
    post({ type: 'error', id: m.id, error: wire(e) });
  } finally {
    if (entry) {
      entry.busy--;
      entry.lastUsed = Date.now();
    }
    running.delete(m.id);
  }
}

async function sweep(): Promise<void> {
  const now = Date.now();
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
  else if (m.type === 'idle') idleMs = m.ms;
  else if (m.type === 'stats') {
    void Promise.all([...models.keys()].map((k) => k.split('@')[0]!)).then((loaded) => post({ type: 'stats', id: m.id, loaded }));
  }
});
