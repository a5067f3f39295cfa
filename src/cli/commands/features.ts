/**
 * `kiln features`: the feature bundles AI tools need. Locally they are installed into this machine's
 * data dir (downloads verified against the pinned digests, a progress bar on a TTY); with a server
 * (--server, KILN_SERVER or the profile's) the daemon's admin routes do the same there.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { defaultDataDir } from '../../core/paths.js';
import { createProgress } from '../progress.js';
import { resolveServer } from '../profiles.js';
import { connect, type RemoteClient } from '../remote/client.js';
import { makeDir } from '../../core/make-dir.js';

type Opts = Record<string, string | boolean | undefined>;
type Status = import('../../ai/features.js').FeatureStatus;

async function remote(o: Opts): Promise<RemoteClient | undefined> {
  if (o.local) return undefined;
  const server = resolveServer({ server: o.server as string | undefined, profile: o.profile as string | undefined });
  return server ? connect(server) : undefined;
}

const mb = (n?: number) => (n === undefined ? '' : n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : `${Math.max(0.1, n / 1e6).toFixed(1)} MB`);

function printStatuses(list: Status[], o: Opts): void {
  if (o.json) {
    for (const s of list) process.stdout.write(`${JSON.stringify(s)}\n`);
    return;
  }
  const w = Math.max(...list.map((s) => s.id.length));
  for (const s of list) {
    const state =
      s.state === 'installing' && s.progress
        ? `installing ${Math.floor((100 * s.progress.bytesDone) / Math.max(1, s.progress.bytesTotal))}%`
        : s.state === 'installed'
          ? `installed ${s.installed?.version ?? ''}`
          : s.state;
    const size = s.state === 'installed' ? mb(s.installed?.bytes) : s.downloadBytes ? `${mb(s.downloadBytes)} download` : '';
    const tail = s.error && s.state !== 'installed' ? `  (${s.error.message})` : s.tools.length ? `  ${s.tools.join(', ')}` : '';
    process.stdout.write(`${s.id.padEnd(w)}  ${state.padEnd(20)}  ${size.padEnd(16)}  ${(s.licence ?? '').padEnd(8)}${tail}\n`);
    // Files only an imported archive supplies: a bundle installs without them, their tools wait for the import.
    for (const i of s.imports ?? []) {
      const what = i.state === 'missing' ? `missing (import only: ${i.install})` : `imported, SHA-256 ${i.sha256}`;
      process.stdout.write(`${''.padEnd(w)}    ${i.file}: ${what}; needed by ${i.usedBy.join(', ')}\n`);
    }
  }
}

export async function featuresList(o: Opts): Promise<void> {
  const c = await remote(o);
  if (c) return printStatuses((await c.json<{ features: Status[] }>('GET', '/api/v1/admin/features')).features, o);
  const { listFeatures } = await import('../../ai/features.js');
  printStatuses(await listFeatures(defaultDataDir()), o);
}

/** A tool id or a bundle id → the bundles to install. */
async function bundlesFor(name: string): Promise<{ bundles: string[]; tool?: string }> {
  const { BUNDLE_IDS } = await import('../../ai/bundles/manifest.js');
  if ((BUNDLE_IDS as readonly string[]).includes(name)) return { bundles: [name] };
  const { findTool } = await import('../../tools/index.js');
  const tool = findTool(name);
  if (!tool) throw new KilnError('USAGE_ERROR', `No tool or feature bundle named ${name}; bundles: ${BUNDLE_IDS.join(', ')}.`);
  // Optional bundles too: they add a tier or setting (noise-removal's model tiers, deepEnhance).
  const bundles = [...(tool.needs?.bundles ?? []), ...(tool.needs?.optionalBundles ?? [])];
  if (!bundles.length) throw new KilnError('USAGE_ERROR', `${name} needs no feature bundle.`);
  return { bundles, tool: name };
}

/** `ocr`, `ocr-pdf` and the bundle id `ocr` install the OCR runtime generation. */
const OCR_NAMES = new Set(['ocr', 'ocr-pdf']);

async function installOcrLocal(o: Opts, files: { indexFile?: string; archiveFile?: string } = {}): Promise<Status> {
  const { installGeneration } = await import('../../ai/ocr/generations.js');
  const bar = createProgress({ quiet: !!o.quiet || !!o.json, total: 100, label: 'ocr', unit: 'percent' });
  const ac = new AbortController();
  const onInt = () => ac.abort();
  process.once('SIGINT', onInt);
  try {
    const r = await installGeneration(defaultDataDir(), {
      ...files,
      signal: ac.signal,
      onProgress: (stage, f) => bar.update(Math.floor(100 * f), stage),
    });
    bar.stop();
    if (!o.quiet && !o.json)
      process.stderr.write(
        `ocr: ${r.result === 'already' ? 'already installed' : 'installed'} (generation ${r.generation.id}, smoke test read "${r.generation.smoke}").\n`,
      );
  } finally {
    bar.stop();
    process.off('SIGINT', onInt);
  }
  const { featureStatus } = await import('../../ai/features.js');
  return featureStatus(defaultDataDir(), 'ocr');
}

export async function featuresInstall(names: string[], o: Opts): Promise<void> {
  const c = await remote(o);
  for (const name of names) {
    if (OCR_NAMES.has(name)) {
      if (c) {
        const r = await c.json<{ queued: string[]; installed: string[] }>('POST', '/api/v1/admin/features/ocr/install');
        if (o.wait) await followRemote(c, 'ocr', o);
        else if (o.json) process.stdout.write(`${JSON.stringify({ name, ...r })}\n`);
        else process.stderr.write(`ocr: ${r.queued.length ? 'install started' : 'an install is already running'} on the server.\n`);
        continue;
      }
      const status = await installOcrLocal(o);
      if (o.json) process.stdout.write(`${JSON.stringify({ bundle: 'ocr', result: 'installed', generation: status.generation?.id })}\n`);
      continue;
    }
    const { bundles, tool } = await bundlesFor(name);
    if (c) {
      const url = tool
        ? `/api/v1/admin/tools/${encodeURIComponent(tool)}/features/install`
        : `/api/v1/admin/features/${encodeURIComponent(name)}/install`;
      const r = await c.json<{ queued: string[]; installed: string[] }>('POST', url);
      if (!o.wait) {
        if (o.json) process.stdout.write(`${JSON.stringify({ name, ...r })}\n`);
        else
          process.stderr.write(
            `${name}: queued ${r.queued.join(', ') || 'nothing'}; already installed ${r.installed.join(', ') || 'nothing'}.\n`,
          );
        continue;
      }
      for (const b of r.queued) await followRemote(c, b, o);
      continue;
    }
    const { findBundle } = await import('../../ai/bundles/list.js');
    const { installBundle } = await import('../../ai/install/installer.js');
    for (const id of bundles) {
      const manifest = findBundle(id);
      if (!manifest)
        throw new KilnError('FEATURE_INCOMPATIBLE', `This version of kiln cannot install ${id} yet.`, { reason: 'bundle-unavailable' });
      const bar = createProgress({ quiet: !!o.quiet || !!o.json, total: 100, label: id, unit: 'percent' });
      const ac = new AbortController();
      const onInt = () => ac.abort();
      process.once('SIGINT', onInt);
      try {
        const r = await installBundle(defaultDataDir(), manifest, {
          signal: ac.signal,
          onProgress: (done, total, stage) => bar.update(Math.floor((100 * done) / Math.max(1, total)), stage),
        });
        bar.stop();
        if (o.json) process.stdout.write(`${JSON.stringify({ bundle: id, result: r })}\n`);
        else if (!o.quiet) process.stderr.write(`${id}: ${r === 'already' ? 'already installed' : 'installed'}.\n`);
      } catch (e) {
        bar.stop();
        if (ac.signal.aborted) throw new KilnError('CANCELLED', `The install of ${id} was interrupted; nothing was installed.`);
        throw e;
      } finally {
        process.off('SIGINT', onInt);
      }
    }
  }
}

/** Polls a server's install of one bundle until it ends, with a progress bar. */
async function followRemote(c: RemoteClient, bundle: string, o: Opts): Promise<void> {
  const bar = createProgress({ quiet: !!o.quiet || !!o.json, total: 100, label: bundle, unit: 'percent' });
  try {
    for (;;) {
      const s = await c.json<Status>('GET', `/api/v1/admin/features/${encodeURIComponent(bundle)}`);
      // The OCR runtime keeps its previous generation when an install fails: installed, with the error.
      if (s.state === 'failed' || (bundle === 'ocr' && s.state === 'installed' && s.error))
        throw new KilnError('UNAVAILABLE', `${bundle}: ${s.error?.message ?? 'the install failed'}`, { reason: s.error?.reason });
      if (s.state === 'installed') break;
      if (s.progress)
        bar.update(Math.floor((100 * s.progress.bytesDone) / Math.max(1, s.progress.bytesTotal)), s.progress.stage ?? s.state);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    bar.stop();
  }
  if (o.json) process.stdout.write(`${JSON.stringify({ bundle, result: 'installed' })}\n`);
  else if (!o.quiet) process.stderr.write(`${bundle}: installed.\n`);
}

export async function featuresRemove(bundle: string, o: Opts): Promise<void> {
  const c = await remote(o);
  if (c) {
    await c.json('DELETE', `/api/v1/admin/features/${encodeURIComponent(bundle)}`);
  } else if (bundle === 'ocr') {
    const { removeGenerations } = await import('../../ai/ocr/generations.js');
    if (!(await removeGenerations(defaultDataDir()))) throw new KilnError('NOT_FOUND', 'The OCR runtime is not installed.');
  } else {
    // A name that is no bundle is a mistake on the command line, as for install (exit 2).
    const { BUNDLE_IDS } = await import('../../ai/bundles/manifest.js');
    if (!(BUNDLE_IDS as readonly string[]).includes(bundle))
      throw new KilnError('USAGE_ERROR', `No feature bundle named ${bundle}; bundles: ${BUNDLE_IDS.join(', ')}.`);
    const { removeInstall } = await import('../../ai/install/layout.js');
    if (!(await removeInstall(defaultDataDir(), 'bundle', bundle))) throw new KilnError('NOT_FOUND', `${bundle} is not installed.`);
  }
  if (!o.quiet) process.stderr.write(`${bundle}: removed.\n`);
}

export async function featuresExport(bundle: string, o: Opts): Promise<void> {
  const out = o.output as string | undefined;
  if (!out) throw new KilnError('USAGE_ERROR', 'Say where the archive goes: kiln features export <bundle> -o FILE.tar');
  const { findBundle } = await import('../../ai/bundles/list.js');
  const manifest = findBundle(bundle);
  if (!manifest) throw new KilnError('USAGE_ERROR', `No feature bundle ${bundle} that this kiln can install.`);
  if (!o.force && (await stat(out).catch(() => undefined)))
    throw new KilnError('OUTPUT_EXISTS', `${out} exists; pass --force to overwrite it.`);
  const { exportBundle } = await import('../../ai/install/archive.js');
  const bar = createProgress({ quiet: !!o.quiet || !!o.json, total: 100, label: bundle, unit: 'percent' });
  const r = await exportBundle(defaultDataDir(), manifest, path.resolve(out), {
    onProgress: (done, total, stage) => bar.update(Math.floor((100 * done) / Math.max(1, total)), stage),
  }).finally(() => bar.stop());
  if (o.json) process.stdout.write(`${JSON.stringify({ bundle, archive: out, bytes: r.bytes })}\n`);
  else if (!o.quiet)
    process.stderr.write(`${bundle}: wrote ${out} (${mb(r.bytes)}). Install it offline with: kiln features import ${path.basename(out)}\n`);
}

export async function featuresImport(file: string | undefined, o: Opts): Promise<void> {
  const index = o.index as string | undefined;
  const archive = (o.archive as string | undefined) ?? (index ? file : undefined);
  if (index) {
    // The OCR runtime: a signed index and the archive it binds.
    for (const f of [index, archive])
      if (!f || !(await stat(f).catch(() => undefined))?.isFile())
        throw new KilnError('USAGE_ERROR', `${f ?? '--archive'} is not a file: give --index FILE --archive FILE.`);
    const c = await remote(o);
    let status: Status;
    if (c) {
      status = (
        await c.postForm('/api/v1/admin/features/import', [
          { field: 'index', path: index, filename: path.basename(index) },
          { field: 'archive', path: archive!, filename: path.basename(archive!) },
        ])
      ).body as unknown as Status;
    } else status = await installOcrLocal(o, { indexFile: path.resolve(index), archiveFile: path.resolve(archive!) });
    if (o.json) process.stdout.write(`${JSON.stringify(status)}\n`);
    else if (!o.quiet)
      process.stderr.write(`ocr: generation ${status.generation?.id ?? ''} active, imported from ${path.basename(archive!)}.\n`);
    return;
  }
  if (o.archive && !file) file = o.archive as string;
  if (!file)
    throw new KilnError(
      'USAGE_ERROR',
      'Give the bundle archive (kiln features import FILE), or --index FILE --archive FILE for the OCR runtime.',
    );
  if (!(await stat(file).catch(() => undefined))?.isFile()) throw new KilnError('USAGE_ERROR', `${file} is not a file.`);
  const c = await remote(o);
  let status: Status;
  if (c) {
    status = (await c.postForm('/api/v1/admin/features/import', [{ field: 'archive', path: file, filename: path.basename(file) }]))
      .body as unknown as Status;
  } else {
    const { importBundle } = await import('../../ai/install/archive.js');
    const r = await importBundle(defaultDataDir(), file);
    const { featureStatus } = await import('../../ai/features.js');
    status = await featureStatus(defaultDataDir(), r.bundle);
  }
  if (o.json) process.stdout.write(`${JSON.stringify(status)}\n`);
  else if (!o.quiet) process.stderr.write(`${status.id}: installed ${status.installed?.version ?? ''} from ${path.basename(file)}.\n`);
}

/** `kiln features build-ocr-runtime --key KEY -o DIR`: the release tooling (the private key stays with the releaser). */
export async function featuresBuildOcrRuntime(o: Opts): Promise<void> {
  const { readFile, writeFile } = await import('node:fs/promises');
  const { buildRelease } = await import('../../ai/ocr/release.js');
  const { INDEX_FILE } = await import('../../ai/ocr/release-index.js');
  const { cacheDir } = await import('../../ai/paths.js');
  const out = path.resolve(o.output as string);
  const key = await readFile(o.key as string).catch(() => {
    throw new KilnError('USAGE_ERROR', `${o.key} is not a readable private key.`);
  });
  const { index, archive } = await buildRelease({ privateKeyPem: key, release: String(o.release), cache: cacheDir(defaultDataDir()) });
  if (o.recipe === false) delete index.assemble;
  const { signIndex } = await import('../../ai/ocr/release-index.js');
  const signed = o.recipe === false ? signIndex(index, key) : index;
  await makeDir(out);
  await writeFile(path.join(out, signed.archive.file), archive);
  await writeFile(path.join(out, INDEX_FILE), `${JSON.stringify(signed, null, 2)}\n`);
  if (o.json)
    process.stdout.write(
      `${JSON.stringify({ index: path.join(out, INDEX_FILE), archive: path.join(out, signed.archive.file), ...signed.archive, keyId: signed.signature?.keyId })}\n`,
    );
  else if (!o.quiet)
    process.stderr.write(
      `Wrote ${INDEX_FILE} and ${signed.archive.file} (${mb(signed.archive.bytes)}, sha256 ${signed.archive.sha256}) to ${out}; signed by key ${signed.signature?.keyId}.\n`,
    );
}
