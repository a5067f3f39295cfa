/**
 * The CLI bundle (scripts/bundle.mjs) that bin/kiln runs: it exists after the build, gives the same
 * output as the tsc build, finds every tool the way src/tools/lazy.ts does, and a local tool run loads
 * neither the daemon nor database or accounts code. Also the launcher's choice between the bundle
 * and dist/src (a tsc rebuild without a new bundle must not run stale code).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import sharp from 'sharp';
import { TOOLS } from '../../src/tools/index.js';
import { KILN, REPO } from '../helpers/cli.js';
import { makePhoto, tempDir } from '../helpers/fixtures.js';

const BUNDLE = path.join(REPO, 'dist', 'bundle');

/** Runs node with `nodeArgs` and the arguments; stdout, stderr and the exit code. */
function run(nodeArgs: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/**
 * `kiln args` with a loader hook that writes every module URL node loads (ESM and CommonJS) to a file:
 * what a command really loaded, bundle chunks included.
 */
async function loadedModules(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const log = path.join(dir, `loaded-${Date.now()}.txt`);
  const hooks = path.join(dir, 'hooks.mjs');
  const preload = path.join(dir, 'preload.mjs');
  writeFileSync(
    hooks,
    "import { appendFileSync } from 'node:fs';\nexport async function load(url, ctx, next) { appendFileSync(process.env.KILN_TEST_LOADED, url + '\\n'); return next(url, ctx); }\n",
  );
  writeFileSync(
    preload,
    [
      "import Module, { register } from 'node:module';",
      "import { appendFileSync } from 'node:fs';",
      `register(${JSON.stringify(pathToFileURL(hooks).href)});`,
      'const load = Module._load;',
      'Module._load = function (request, parent, isMain) {',
      "  try { appendFileSync(process.env.KILN_TEST_LOADED, 'cjs:' + Module._resolveFilename(request, parent, isMain) + '\\n'); } catch {}",
      '  return load.apply(this, arguments);',
      '};',
    ].join('\n'),
  );
  const r = await run(['--import', pathToFileURL(preload).href, KILN, ...args], { ...env, KILN_TEST_LOADED: log });
  assert.equal(r.code, 0, r.stderr);
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
}

/** Module files behind the loaded URLs: a bundle chunk stands for the sources it holds (inputs.json). */
function sourcesOf(urls: string[]): string[] {
  const inputs = JSON.parse(readFileSync(path.join(BUNDLE, 'inputs.json'), 'utf8')) as Record<string, string[]>;
  return urls.flatMap((u) => {
    const file = u.replace(/^cjs:/, '').replace(/^file:\/\//, '');
    if (path.dirname(file) === BUNDLE) return inputs[path.basename(file)] ?? [`unknown chunk ${file}`];
    return [path.relative(REPO, file)];
  });
}

/** What a local image run must never load: the daemon, its database and accounts code and their drivers. */
const SERVER_ONLY =
  /^dist\/daemon\/|^dist\/src\/cli\/commands\/serve|node_modules\/(fastify|@fastify\/[^/]+|pg|better-sqlite3|kysely|ioredis|bullmq|@node-saml\/node-saml|openid-client|@aws-sdk\/[^/]+)\//;

/**
 * What a local JPEG resize needs none of (each loads lazily where it is used; zod's English locale only;
 * the SVG input module, with node:zlib for .svgz, and its sanitizer's XML parser for SVG inputs only).
 */
const LOCAL_RUN_NEEDLESS =
  /node_modules\/(file-type|yazl|cli-progress|@xmldom\/xmldom)\/|^dist\/src\/ai\/|^dist\/src\/cli\/(program|remote\/transport)\.js$|^dist\/src\/tools\/bundles\.js$|^dist\/src\/tools\/image\/_shared\/svg-input\.js$/;
const OTHER_ZOD_LOCALES = /node_modules\/zod\/v4\/locales\/(?!en\.c?js$|index\.c?js$)/;
/** Packages the bundle takes from vendor.cjs (src/core/code-cache.ts), never as modules of their own. */
const VENDORED = /node_modules\/(zod|commander|sharp)\//;

/** Runs `exe` as a program (a shell script first), with only the given variables of `names` set. */
function program(exe: string, args: string[], names: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const env2 = { ...process.env, ...env };
    for (const k of names) if (!(k in env)) delete env2[k];
    const child = spawn(exe, args, { env: env2, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** bin/kiln with the bin/package.json that makes it CommonJS, copied under `root`; the launcher's path. */
function copyLauncher(root: string): string {
  mkdirSync(path.join(root, 'bin'), { recursive: true });
  for (const f of ['kiln', 'package.json']) copyFileSync(path.join(path.dirname(KILN), f), path.join(root, 'bin', f));
  return path.join(root, 'bin', 'kiln');
}

describe('CLI bundle', { concurrency: 2 }, () => {
  const dir = tempDir('kiln-startup-');

  /** A copy of bin/kiln whose "CLI" prints the given variables as it sees them; returns its path. */
  const envEcho = (name: string, vars: string[]): string => {
    const root = path.join(dir, name);
    mkdirSync(path.join(root, 'dist', 'src', 'cli'), { recursive: true });
    copyLauncher(root);
    writeFileSync(path.join(root, 'package.json'), '{"type":"module"}');
    writeFileSync(
      path.join(root, 'dist', 'src', 'cli', 'main.js'),
      `process.stdout.write(${JSON.stringify(vars)}.map((k) => process.env[k] ?? '-').join(' '));`,
    );
    return path.join(root, 'bin', 'kiln');
  };

  test('the build made a bundle newer than the tsc output, so bin/kiln runs it', () => {
    const main = path.join(BUNDLE, 'main.js');
    assert.ok(existsSync(main), 'dist/bundle/main.js is missing: run node scripts/bundle.mjs after tsc (npm run build does)');
    // (an equal mtime counts as fresh in bin/kiln)
    const { mtimeMs: b } = statSync(main);
    const { mtimeMs: s } = statSync(path.join(REPO, 'dist', 'src', 'cli', 'main.js'));
    assert.ok(b >= s, 'the bundle is older than dist/src: bin/kiln would fall back; rebuild it');
  });

  test('a resize through the bundle writes the same image as through dist/src', async () => {
    const input = await makePhoto(dir, 'photo.jpg', 640, 480);
    const outs = [path.join(dir, 'bundled.jpg'), path.join(dir, 'unbundled.jpg')];
    for (const [i, out] of outs.entries()) {
      const r = await run([KILN, 'resize', input, '--width', '200', '-o', out], i ? { KILN_NO_BUNDLE: '1' } : {});
      assert.equal(r.code, 0, r.stderr);
    }
    const [a, b] = await Promise.all(outs.map((o) => sharp(o).raw().toBuffer({ resolveWithObject: true })));
    assert.equal(a!.info.width, 200);
    assert.equal(a!.info.height, 150);
    assert.ok(a!.data.equals(b!.data), 'bundled and unbundled runs decode to different pixels');
  });

  test('a local resize loads no daemon, database or accounts code (bundled and not)', async () => {
    const input = await makePhoto(dir, 'load.jpg', 320, 240);
    for (const env of [{}, { KILN_NO_BUNDLE: '1' }]) {
      const urls = await loadedModules(dir, ['resize', input, '--width', '100', '-o', path.join(dir, 'load-out.jpg'), '--force'], env);
      const sources = sourcesOf(urls);
      assert.ok(
        sources.some((s) => s.endsWith('src/tools/image/essentials/resize.js')),
        `the resize tool did not load?\n${sources.join('\n')}`,
      );
      const bad = sources.filter((s) => SERVER_ONLY.test(s));
      assert.deepEqual(bad, [], `${env.KILN_NO_BUNDLE ? 'dist/src' : 'bundle'}: a local run loaded server code`);
      assert.deepEqual(
        sources.filter((s) => LOCAL_RUN_NEEDLESS.test(s)),
        [],
        `${env.KILN_NO_BUNDLE ? 'dist/src' : 'bundle'}: a local JPEG resize loaded what it does not use`,
      );
      // The bundle is the point: a handful of files instead of ~300.
      if (!env.KILN_NO_BUNDLE) {
        assert.ok(urls.length < 80, `the bundled run loaded ${urls.length} files`);
        assert.deepEqual(
          sources.filter((s) => VENDORED.test(s)),
          [],
          'zod, commander or sharp loaded as modules, not from vendor.cjs',
        );
      }
    }
  });

  test('zod, commander and sharp come from vendor.cjs (zod in English only), whose compiled code the next run reuses', async () => {
    const all = JSON.parse(readFileSync(path.join(BUNDLE, 'inputs.json'), 'utf8')) as Record<string, string[]>;
    const inputs = all['vendor.cjs'] ?? [];
    for (const pkg of ['zod', 'commander', 'sharp'])
      assert.ok(
        inputs.some((i) => i.includes(`node_modules/${pkg}/`)),
        `vendor.cjs holds no ${pkg}`,
      );
    assert.ok(
      inputs.some((i) => /zod\/v4\/locales\/en\.cjs$/.test(i)),
      'zod without its English messages',
    );
    assert.deepEqual(
      inputs.filter((i) => OTHER_ZOD_LOCALES.test(i)),
      [],
    );
    // No chunk of the ES module bundle holds any of them a second time.
    const twice = Object.entries(all).filter(([out, ins]) => out !== 'vendor.cjs' && ins.some((i) => VENDORED.test(i)));
    assert.deepEqual(
      twice.map(([out]) => out),
      [],
    );
    const cache = path.join(dir, 'compile-cache');
    const input = await makePhoto(dir, 'cache.jpg', 64, 48);
    const out = path.join(dir, 'cache-out.jpg');
    const r = await run([KILN, 'resize', input, '--width', '32', '-o', out, '--force'], { NODE_COMPILE_CACHE: cache });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      readdirSync(path.join(cache, 'kiln')).filter((f) => f.startsWith('vendor.cjs-')).length,
      1,
      'the run left no code cache of vendor.cjs',
    );
  });

  test("the bundle's tool loader finds every tool of the catalog, as src/tools/lazy.ts does", async () => {
    const inputs = JSON.parse(readFileSync(path.join(BUNDLE, 'inputs.json'), 'utf8')) as Record<string, string[]>;
    const chunk = Object.keys(inputs).find((k) => inputs[k]!.includes('dist/src/tools/lazy.js'));
    assert.ok(chunk, 'no chunk holds the tool loader');
    const { loadTool, toolIds } = (await import(pathToFileURL(path.join(BUNDLE, chunk)).href)) as {
      loadTool: (id: string) => Promise<{ id: string } | undefined>;
      toolIds: () => string[];
    };
    assert.deepEqual(toolIds(), (await import('../../src/tools/lazy.js')).toolIds());
    assert.equal(typeof loadTool, 'function');
    for (const t of TOOLS) assert.equal((await loadTool(t.id))?.id, t.id, `bundled loadTool(${t.id})`);
    assert.equal(await loadTool('no-such-tool'), undefined);
    assert.equal(await loadTool('../core/tool'), undefined);
  });

  test('a bundle file defines require exactly when its own code uses it', async () => {
    const { BANNER } = (await import(pathToFileURL(path.join(REPO, 'scripts', 'bundle.mjs')).href)) as { BANNER: string };
    const files = readdirSync(BUNDLE).filter((f) => f.endsWith('.js'));
    let withBanner = 0;
    for (const f of files) {
      const text = readFileSync(path.join(BUNDLE, f), 'utf8');
      const banner = text.startsWith(`${BANNER}\n`);
      const uses = /\brequire\b|\b__kilnBundleDir\b/.test(banner ? text.slice(BANNER.length + 1) : text);
      assert.equal(banner, uses, `${f}: ${uses ? 'uses require without defining it' : 'defines a require it never uses'}`);
      if (banner) withBanner++;
    }
    // Only inlined CommonJS packages (sharp's, commander…) and esbuild's own __require need one.
    assert.ok(withBanner > 0 && withBanner < files.length / 10, `${withBanner} of ${files.length} files define require`);
  });

  test('bin/kiln runs the bundle only when it is not older than dist/src', async () => {
    const root = path.join(dir, 'launcher');
    mkdirSync(path.join(root, 'dist', 'bundle'), { recursive: true });
    mkdirSync(path.join(root, 'dist', 'src', 'cli'), { recursive: true });
    copyLauncher(root);
    writeFileSync(path.join(root, 'package.json'), '{"type":"module","version":"9.9.9"}');
    const bundled = path.join(root, 'dist', 'bundle', 'main.js');
    const src = path.join(root, 'dist', 'src', 'cli', 'main.js');
    writeFileSync(bundled, "process.stdout.write('bundle');");
    writeFileSync(src, "process.stdout.write('src');");
    const which = async (env: NodeJS.ProcessEnv = {}) => (await run([path.join(root, 'bin', 'kiln'), 'tools'], env)).stdout;
    utimesSync(src, new Date(1_000_000), new Date(1_000_000));
    utimesSync(bundled, new Date(2_000_000), new Date(2_000_000));
    assert.equal(await which(), 'bundle');
    assert.equal(await which({ KILN_NO_BUNDLE: '1' }), 'src');
    utimesSync(src, new Date(3_000_000), new Date(3_000_000));
    assert.equal(await which(), 'src', 'a stale bundle ran');
    // A deployed release: every mtime 0 (tar --mtime=@0) and no bundle.
    rmSync(bundled);
    utimesSync(src, new Date(0), new Date(0));
    assert.equal(await which(), 'src', 'a missing bundle was taken for a current one');
    assert.equal((await run([path.join(root, 'bin', 'kiln'), '--version'])).stdout, '9.9.9\n');
  });

  test("bin/kiln run as a program sets the malloc tunables and the young-generation cap for serve only, and keeps the user's", async () => {
    const exe = envEcho('tunables', ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_']);
    const direct = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      program(exe, args, ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'], env);
    assert.equal(await direct(['serve', '--port', '0']), '2 131072 131072');
    assert.equal(await direct(['resize', 'x.jpg']), '- - -');
    assert.equal(await direct(['serve'], { MALLOC_ARENA_MAX: '8' }), '8 131072 131072');
    // Through node the preamble is a comment: the same program, no shell.
    assert.equal((await run([exe, 'serve'])).stdout, '- - -');
    // V8's young generation is capped for serve; a flag of the user's comes later and wins.
    const opts = envEcho('node-options', ['NODE_OPTIONS']);
    assert.equal(await program(opts, ['serve'], ['NODE_OPTIONS']), '--max-semi-space-size=8');
    assert.equal(
      await program(opts, ['serve'], ['NODE_OPTIONS'], { NODE_OPTIONS: '--max-semi-space-size=16' }),
      '--max-semi-space-size=8 --max-semi-space-size=16',
    );
    assert.equal(await program(opts, ['resize', 'x.jpg'], ['NODE_OPTIONS']), '-');
  });

  test("bin/kiln run as a program gives libuv's pool room for the runs at once plus four, and keeps the user's size", async () => {
    const exe = envEcho('pool', ['UV_THREADPOOL_SIZE']);
    // nproc, which the preamble asks, also reads OpenMP's variables.
    const names = ['UV_THREADPOOL_SIZE', 'JOB_CONCURRENCY', 'OMP_NUM_THREADS', 'OMP_THREAD_LIMIT'];
    const size = (args: string[], env: NodeJS.ProcessEnv = {}) => program(exe, args, names, env);
    // serve: JOB_CONCURRENCY jobs, the cores when it is unset or not a whole number (as daemon/config.ts reads it).
    assert.equal(await size(['serve']), String(os.availableParallelism() + 4));
    assert.equal(await size(['serve'], { JOB_CONCURRENCY: '12' }), '16');
    assert.equal(await size(['serve'], { JOB_CONCURRENCY: 'lots' }), String(os.availableParallelism() + 4));
    assert.equal(await size(['serve'], { JOB_CONCURRENCY: '5000' }), '1024');
    assert.equal(await size(['serve'], { UV_THREADPOOL_SIZE: '7', JOB_CONCURRENCY: '12' }), '7');
    assert.equal(await size(['resize', 'x.jpg']), '16');
    assert.equal(await size(['resize', 'x.jpg'], { UV_THREADPOOL_SIZE: '3' }), '3');
  });

  test('bin/kiln run as a program hands NODE_EXTRA_CA_CERTS over as KILN_DEFERRED_CA_CERTS, except to serve', async () => {
    const exe = envEcho('deferred-ca', ['NODE_EXTRA_CA_CERTS', 'KILN_DEFERRED_CA_CERTS']);
    const names = ['NODE_EXTRA_CA_CERTS', 'KILN_DEFERRED_CA_CERTS'];
    assert.equal(await program(exe, ['resize', 'x.jpg'], names, { NODE_EXTRA_CA_CERTS: '/ca.pem' }), '- /ca.pem');
    assert.equal(await program(exe, ['serve'], names, { NODE_EXTRA_CA_CERTS: '/ca.pem' }), '/ca.pem -');
    assert.equal(await program(exe, ['resize', 'x.jpg'], names), '- -');
  });
});
