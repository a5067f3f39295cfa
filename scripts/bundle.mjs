#!/usr/bin/env node
// Bundles the compiled CLI (dist/src/cli/main.js, after tsc) into dist/bundle/: one file for what every
// command needs, plus chunks for what a command loads lazily (each tool module, the daemon, ssh…).
// A `kiln resize` otherwise resolves, reads and compiles ~300 module files before any work starts.
// bin/kiln loads dist/bundle/main.js when it is newer than dist/src/cli/main.js, else the tsc output.
//
// What keeps the bundle behaving like the tsc output:
// - Native and heavy packages stay outside (resolved from node_modules at run time as before); only
//   kiln's own code and the pure-JS packages of the start-up path (INLINE, with their dependencies)
//   go in. zod, commander and sharp's JavaScript (VENDOR) go into vendor.cjs instead, one CommonJS file
//   whose compiled code src/core/code-cache.ts keeps between runs (node 20 keeps none for modules).
// - `import.meta.url` in every bundled file is rewritten to the URL of the file it came from, so
//   workers, `createRequire` and paths to data files (package.json, release keys) resolve as before.
//   All outputs sit in one flat directory, which makes that URL a constant relative to any chunk.
// - src/tools/lazy.js finds a tool's module by reading the section lists at run time and importing a
//   computed URL, which a bundler cannot follow; here it is replaced by the same id → module table,
//   computed from the same list files, as static imports (each tool becomes its own chunk), and the
//   same toolIds() list. A new export of lazy.ts must be added here too (esbuild then fails the build).
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
export const OUT_DIR = path.join(dist, 'bundle');
const ENTRY = path.join(dist, 'src', 'cli', 'main.js');
const LAZY = path.join(dist, 'src', 'tools', 'lazy.js');

/**
 * Packages on the path of a local tool run (and those sharing their dependencies), bundled with
 * whatever they import.
 */
const INLINE = new Set([
  'file-type',
  'cli-progress',
  'yazl',
  'yauzl',
  // The MCP SDK imports zod: outside the bundle it would load a second copy of zod (~1.5 MB of source).
  '@modelcontextprotocol/sdk',
]);
/**
 * Packages that go into one CommonJS file, dist/bundle/vendor.cjs, which src/core/code-cache.ts runs
 * with V8's code cache kept between runs (node 20 has no compile cache for modules): compiling them was
 * most of what a tool run cost above a script that imports sharp (sharp's JavaScript, with semver,
 * detect-libc and colour, costs more to load than its native part). Every import of them, from kiln or
 * from an inlined package (the MCP SDK's zod/v3, zod/v4-mini…), is answered from that one file, so there
 * is one zod in the process. CommonJS builds without top-level await, as such a file must be.
 */
const VENDOR = new Set(['zod', 'commander', 'sharp']);
const VENDOR_FILE = 'vendor.cjs';
const CODE_CACHE = path.join(dist, 'src', 'core', 'code-cache.js');
/** Never bundled, even when an inlined package imports them: native code, or files read beside the package. */
const NEVER = new Set(['better-sqlite3', 'onnxruntime-node', '@napi-rs/keyring', 'playwright-core', 'zxing-wasm']);

/**
 * What esbuild puts first in every output: a `require` (and the directory for __dirname) for inlined
 * CommonJS code. Only a few outputs use it; in the others it cost a module record, a require function
 * and two more imports to link at every load: `kiln resize` of a 64×64 JPEG loaded 47 chunks, 44 of
 * which never used it (311.5 → 306.7 ms median of 40 interleaved runs on a slow day), and the idle
 * daemon, which loads ~300, holds 0.4 MB less heap.
 */
export const BANNER = [
  "import { createRequire as __kilnCreateRequire } from 'node:module';",
  "import { fileURLToPath as __kilnFileURLToPath } from 'node:url';",
  'const require = __kilnCreateRequire(import.meta.url);',
  "const __kilnBundleDir = __kilnFileURLToPath(new URL('.', import.meta.url));",
].join(' ');

/**
 * Removes the banner from each output whose own code names neither `require` nor `__kilnBundleDir`
 * (a word match: a mention in a string keeps it, which is only a wasted banner). The number of outputs
 * changed.
 */
function dropUnusedBanners(files) {
  let n = 0;
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(file, 'utf8');
    if (!text.startsWith(`${BANNER}\n`)) throw new Error(`${path.basename(file)} does not start with the banner`);
    const body = text.slice(BANNER.length + 1);
    if (/\brequire\b|\b__kilnBundleDir\b/.test(body)) continue;
    writeFileSync(file, body);
    n++;
  }
  return n;
}

function packageName(spec) {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every specifier of a VENDOR package the ESM build met (what vendor.cjs must answer). */
const vendorSpecs = new Set();

/**
 * zod's `locales` namespace holds the error messages of ~60 languages (a third of zod's code); kiln uses
 * only English, which zod installs itself from locales/en.cjs.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.cjs$/ }, (args) => ({
      contents: "const en = require('./en.cjs');\nexports.en = en && en.__esModule ? en.default : en;\n",
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * sharp's JavaScript finds its native addon (`@img/sharp-<platform>/sharp.node`, or a build of its own
 * under `../src/build/Release`) and libvips' files by requires computed at run time: those resolve from
 * the file they are written in, as before bundling, through a require made for that file. The rest of
 * its code (and semver, detect-libc, @img/colour) is bundled.
 */
const sharpNativeRequires = {
  name: 'sharp-native-requires',
  setup(b) {
    let addonLoader = false;
    b.onLoad({ filter: /[\\/]node_modules[\\/]sharp[\\/]dist[\\/][^\\/]+\.cjs$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const native = /\brequire\((`[^`]*`|"@img\/sharp-[^"]*"|'@img\/sharp-[^']*')\)/g;
      if (!native.test(text)) return undefined;
      if (text.includes('sharp.node')) addonLoader = true;
      const rel = path.relative(OUT_DIR, args.path).split(path.sep).join('/');
      return {
        contents: `var __kilnRequireHere = require('node:module').createRequire(require('node:path').join(__dirname, ${JSON.stringify(rel)}));\n${text.replace(native, '__kilnRequireHere($1)')}`,
        loader: 'js',
        resolveDir: path.dirname(args.path),
      };
    });
    // A sharp whose addon is loaded some other way would be bundled with a require that finds nothing.
    b.onEnd((result) => {
      if (result.errors.length === 0 && vendorSpecs.has('sharp') && !addonLoader)
        throw new Error("sharp's JavaScript no longer loads its addon as this build expects (sharpNativeRequires)");
    });
  },
};

/** dist/bundle/vendor.cjs: the VENDOR specifiers the ESM build met, as one object keyed by specifier. */
async function buildVendor(build) {
  const specs = [...vendorSpecs].sort();
  const result = await build({
    stdin: {
      // Getters: a command that needs zod runs none of the MCP SDK's zod/v3 or zod/v4-mini.
      contents: `module.exports = {\n${specs.map((sp) => `  get ${JSON.stringify(sp)}() { return require(${JSON.stringify(sp)}); },`).join('\n')}\n};\n`,
      resolveDir: root,
      sourcefile: 'vendor-entry.cjs',
      loader: 'js',
    },
    outfile: path.join(OUT_DIR, VENDOR_FILE),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    plugins: [zodEnglishOnly, sharpNativeRequires],
    logLevel: 'warning',
    metafile: true,
    preserveSymlinks: true,
    legalComments: 'none',
    minifyWhitespace: process.env.KILN_BUNDLE_MINIFY !== '0',
    minifySyntax: process.env.KILN_BUNDLE_MINIFY !== '0',
  });
  // vm.Script (src/core/code-cache.ts) has no loader for import(): a package that took to it must leave VENDOR.
  if (/(^|[^\w$.])import\(/m.test(readFileSync(path.join(OUT_DIR, VENDOR_FILE), 'utf8')))
    throw new Error(`${VENDOR_FILE} calls import(), which code-cache.ts cannot run: take that package out of VENDOR`);
  return { specs, metafile: result.metafile };
}

const isBare = (spec) => !spec.startsWith('.') && !spec.startsWith('/') && !spec.startsWith('node:') && !spec.includes(':');
const inNodeModules = (file) => file.split(path.sep).includes('node_modules');

/**
 * tool id → module paths relative to dist/src/tools, in the order lazy.ts tries them: sections in
 * SECTIONS order, and a list's `from './x/id.js'` lines (the same pattern lazy.ts matches).
 */
export async function toolModuleTable() {
  const { SECTIONS } = await import(pathToFileURL(path.join(dist, 'src', 'core', 'tool.js')).href);
  const table = new Map();
  /** toolIds() of lazy.ts: every id in list order, duplicates kept. */
  const ids = [];
  for (const section of SECTIONS) {
    let text;
    try {
      text = readFileSync(path.join(dist, 'src', 'tools', section, 'list.js'), 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/from '\.\/(?:[\w-]+\/)*([a-z0-9-]+)\.js'/g)) ids.push(m[1]);
    for (const m of text.matchAll(/from '(\.\/(?:[\w-]+\/)*([a-z0-9]+(?:-[a-z0-9]+)*)\.js)'/g)) {
      const [, rel, id] = m;
      const list = table.get(id) ?? [];
      const file = `./${section}/${rel.slice(2)}`;
      if (!list.includes(file)) list.push(file);
      table.set(id, list);
    }
  }
  return { table, ids };
}

async function lazyReplacement() {
  const { table, ids } = await toolModuleTable();
  const rows = [...table].map(
    ([id, files]) => `  [${JSON.stringify(id)}, [${files.map((f) => `() => import(${JSON.stringify(f)})`).join(', ')}]],`,
  );
  return [
    '// Generated by scripts/bundle.mjs from the section lists: the same lookup as src/tools/lazy.ts.',
    'const MODULES = new Map([',
    ...rows,
    ']);',
    'export async function loadTool(id) {',
    '  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id)) return undefined;',
    '  for (const load of MODULES.get(id) ?? []) {',
    '    const mod = await load();',
    "    if (mod.default?.kind === 'tool' && mod.default.id === id) return mod.default;",
    '  }',
    '  return undefined;',
    '}',
    `const IDS = ${JSON.stringify(ids)};`,
    'export function toolIds() {',
    '  return [...IDS];',
    '}',
    '',
  ].join('\n');
}

const kilnPlugin = {
  name: 'kiln',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point' || !isBare(args.path)) return undefined;
      const name = packageName(args.path);
      if (VENDOR.has(name)) {
        vendorSpecs.add(args.path);
        return { path: args.path, namespace: 'kiln-vendor' };
      }
      if (NEVER.has(name)) return { path: args.path, external: true };
      // From kiln's code only the INLINE packages; inside an inlined package, everything it needs.
      if (inNodeModules(args.importer) || INLINE.has(name)) return undefined;
      return { path: args.path, external: true };
    });
    // `__kilnBundleDir` (the banner's) is the flat output directory, where vendor.cjs sits beside every chunk.
    b.onLoad({ filter: /.*/, namespace: 'kiln-vendor' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(CODE_CACHE)}).requireCached(require('node:path').join(__kilnBundleDir, ${JSON.stringify(VENDOR_FILE)}))[${JSON.stringify(args.path)}];`,
      loader: 'js',
      resolveDir: root,
    }));
    b.onLoad({ filter: /\.(c|m)?js$/ }, async (args) => {
      if (args.path === LAZY) return { contents: await lazyReplacement(), loader: 'js', resolveDir: path.dirname(LAZY) };
      let text = readFileSync(args.path, 'utf8');
      const rel = path.relative(OUT_DIR, args.path).split(path.sep).join('/');
      if (text.includes('import.meta.url'))
        text = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`);
      // A CommonJS file of an inlined package keeps its own __dirname / __filename.
      // (import.meta would turn the file into ESM for esbuild: the banner's __kilnBundleDir stands in.)
      if (
        /\b__(dirname|filename)\b/.test(text) &&
        /\b(module\.exports|exports\.|require\()/.test(text) &&
        !/^\s*(import|export)\s/m.test(text)
      )
        text = `var __filename = require('node:path').join(__kilnBundleDir, ${JSON.stringify(rel)}); var __dirname = require('node:path').dirname(__filename);\n${text}`;
      return { contents: text, loader: 'js' };
    });
  },
};

export async function bundle({ quiet = false } = {}) {
  const { build } = await import('esbuild');
  rmSync(OUT_DIR, { recursive: true, force: true });
  vendorSpecs.clear();
  const t0 = Date.now();
  const result = await build({
    entryPoints: { main: ENTRY },
    outdir: OUT_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    chunkNames: '[name]-[hash]',
    // Inlined CommonJS packages call require() for node built-ins; ESM output has no require of its own.
    // (Removed again below from the outputs that never use it.)
    banner: { js: BANNER },
    plugins: [kilnPlugin],
    logLevel: 'warning',
    // registry.ts imports an npm engine by its name held in a variable: left to node, as intended.
    logOverride: { 'unsupported-dynamic-import': 'silent' },
    metafile: true,
    // Paths relative to the checkout even when node_modules is a symlink (import.meta.url rewrites above).
    preserveSymlinks: true,
    legalComments: 'none',
    minifyWhitespace: process.env.KILN_BUNDLE_MINIFY !== '0',
    minifySyntax: process.env.KILN_BUNDLE_MINIFY !== '0',
  });
  const trimmed = dropUnusedBanners(Object.keys(result.metafile.outputs).map((f) => path.resolve(root, f)));
  const vendor = await buildVendor(build);
  // Which sources each output holds: lets a test tell what a command loaded (test/bench/cli-startup.test.ts).
  const inputs = {};
  for (const [out, o] of [...Object.entries(result.metafile.outputs), ...Object.entries(vendor.metafile.outputs)])
    inputs[path.basename(out)] = Object.keys(o.inputs).map((i) => path.relative(root, path.resolve(i)).split(path.sep).join('/'));
  writeFileSync(path.join(OUT_DIR, 'inputs.json'), JSON.stringify(inputs));
  const files = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'));
  const main = statSync(path.join(OUT_DIR, 'main.js')).size;
  if (!quiet)
    process.stderr.write(
      `[bundle] dist/bundle: main.js ${(main / 1024).toFixed(0)} KiB + ${files.length - 1} chunks (${files.length - trimmed} with a require), ${VENDOR_FILE} ${(statSync(path.join(OUT_DIR, VENDOR_FILE)).size / 1024).toFixed(0)} KiB (${vendor.specs.join(', ')}) in ${Date.now() - t0} ms\n`,
    );
  return result;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  bundle().catch((e) => {
    process.stderr.write(`[bundle] failed: ${e.message}\n`);
    process.exit(1);
  });
}
