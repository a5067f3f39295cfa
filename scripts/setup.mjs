#!/usr/bin/env node
// Self-installing set-up behind `npm start` and `npm test`: npm packages from the lock file, the Debian
// packages of the engines (when missing and when root), then the TypeScript build when sources changed.
// Only node built-ins here: this runs before node_modules exists.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const log = (m) => process.stderr.write(`[setup] ${m}\n`);

const [maj, min] = process.versions.node.split('.').map(Number);
if (maj < 20 || (maj === 20 && min < 9)) {
  log(`Node ${process.versions.node} is too old: kiln needs Node >= 20.9.`);
  process.exit(1);
}

// Engines: binary -> Debian packages that bring it.
export const DEBIAN = {
  ffmpeg: ['ffmpeg'],
  sox: ['sox', 'libsox-fmt-mp3'],
  'espeak-ng': ['espeak-ng'],
  pocketsphinx_continuous: ['pocketsphinx', 'pocketsphinx-en-us'],
  qpdf: ['qpdf'],
  gs: ['ghostscript'],
  pdftoppm: ['poppler-utils'],
  mutool: ['mupdf-tools'],
  soffice: ['libreoffice-writer', 'libreoffice-calc', 'libreoffice-impress'],
  tesseract: [
    'tesseract-ocr',
    'tesseract-ocr-eng',
    'tesseract-ocr-deu',
    'tesseract-ocr-fra',
    'tesseract-ocr-spa',
    'tesseract-ocr-chi-sim',
    'tesseract-ocr-jpn',
    'tesseract-ocr-kor',
    'tesseract-ocr-osd',
  ],
  ocrmypdf: ['ocrmypdf'],
  exiftool: ['libimage-exiftool-perl'],
  potrace: ['potrace'],
  zbarimg: ['zbar-tools'],
  pandoc: ['pandoc'],
  chromium: ['chromium'],
  vips: ['libvips-tools'],
  '/usr/bin/convert': ['imagemagick'],
  // Test-only (npm test): the CLI suites drive a real sshd, a tmux terminal and groff.
  ...(process.env.npm_lifecycle_event === 'test'
    ? { '/usr/sbin/sshd': ['openssh-server'], tmux: ['tmux'], groff: ['groff-base', 'man-db'] }
    : {}),
  'fc-list': ['fonts-dejavu', 'fonts-liberation', 'fonts-noto-core', 'fonts-noto-cjk', 'frei0r-plugins'],
};

function has(bin) {
  if (bin.includes('/')) return existsSync(bin);
  return (process.env.PATH || '').split(':').some((d) => d && existsSync(path.join(d, bin)));
}

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) {
    log(`${cmd} ${args.join(' ')} failed (exit ${r.status}).`);
    process.exit(r.status || 1);
  }
}

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

// 1. Debian engines.
if (process.env.KILN_SKIP_APT !== '1') {
  const fontsOk = existsSync('/usr/share/fonts/truetype/dejavu') && existsSync('/usr/share/fonts/truetype/liberation');
  const missing = Object.entries(DEBIAN).filter(([bin]) => (bin === 'fc-list' ? !fontsOk : !has(bin)));
  if (missing.length) {
    const pkgs = [...new Set(missing.flatMap(([, p]) => p))];
    const isRoot = process.getuid?.() === 0;
    if (isRoot && has('apt-get')) {
      log(`installing engines from Debian: ${pkgs.join(' ')}`);
      run('apt-get', ['update', '-qq']);
      run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { DEBIAN_FRONTEND: 'noninteractive' });
    } else {
      log(`missing engines (tools that need them will answer ENGINE_MISSING): run as root: apt-get install ${pkgs.join(' ')}`);
    }
  }
}

// 2. npm packages from the lock file.
const stamp = path.join('node_modules', '.package-lock.json');
if (!existsSync(stamp) || mtime('package-lock.json') > mtime(stamp)) {
  log('installing npm packages (npm ci)');
  // onnxruntime-node's installer would fetch CUDA files from outside the npm registry.
  run('npm', ['ci', '--no-audit', '--no-fund'], { ONNXRUNTIME_NODE_INSTALL: 'skip', ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip' });
}

// 3. Build when any source is newer than the last build.
function newest(dir) {
  let t = 0;
  if (!existsSync(dir)) return 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : mtime(p));
  }
  return t;
}
const built = path.join('dist', '.built');
const srcTime = Math.max(...['src', 'daemon', 'test', 'bench', 'scripts'].map(newest), mtime('tsconfig.json'), mtime('package-lock.json'));
if (!existsSync(built) || srcTime > mtime(built)) {
  log('building (tsc)');
  execFileSync(process.execPath, [path.join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { stdio: 'inherit' });
  mkdirSync('dist', { recursive: true });
  writeFileSync(built, new Date().toISOString());
}

// 4. The CLI bundle (scripts/bundle.mjs) when it is older than the tsc output: bin/kiln runs it instead of
// ~300 module files. Without esbuild (an install without dev dependencies) bin/kiln runs dist/src.
if (mtime(path.join('dist', 'bundle', 'main.js')) < mtime(path.join('dist', 'src', 'cli', 'main.js'))) {
  log('bundling the CLI (esbuild)');
  try {
    await (await import('./bundle.mjs')).bundle({ quiet: true });
  } catch (e) {
    log(`no CLI bundle (${e.message.split('\n')[0]}): kiln runs from dist/src, which starts slower.`);
  }
}
