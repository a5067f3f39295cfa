#!/usr/bin/env node
// Runs the static checks (Biome's formatter and linter, the import rules of ARCHITECTURE.md), then every
// compiled test file with node's test runner. Test data lives in a private temp dir.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A few seconds: both read the sources only (the import checker is compiled by the build into dist/scripts).
for (const [name, args] of [
  ['biome ci', [path.join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'ci', '--colors=off', '.']],
  ['check-imports', [path.join(root, 'dist', 'scripts', 'check-imports.js')]],
]) {
  const check = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  if (check.status !== 0) {
    process.stdout.write(check.stdout);
    console.error(`${name} failed: fix the findings above before the tests run.`);
    process.exit(check.status ?? 1);
  }
}

function find(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...find(p));
    else if (e.name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
// node --test (v20) sorts the files itself and starts them in that order, two at a time.
let files = find(path.resolve('dist', 'test')).sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
const CONCURRENCY = 2;
// KILN_TEST_TIMES=<file>: every test file's process appends its wall and CPU time there
// (scripts/test-times.mjs), and the run ends with the longest files listed.
const times = process.env.KILN_TEST_TIMES ? path.resolve(process.env.KILN_TEST_TIMES) : undefined;
const timesArgs = times ? ['--import', pathToFileURL(path.join(root, 'scripts', 'test-times.mjs')).href] : [];
/** One run of node's test runner over `list` in a fresh private home; its exit status. */
function runTests(list, extraEnv = {}) {
  const home = mkdtempSync(path.join(tmpdir(), 'kiln-test-'));
  for (const d of ['data', 'tmp', 'config', 'work']) mkdirSync(path.join(home, d));
  // The tests run in a scratch directory: a test that forgets -o cannot litter the checkout.
  // node's runner gives each file the default timeout as a whole; it is the longest test's own budget
  // (the hostile corpus, 25 min): that corpus took 137-185 s alone and 525 s beside a second whole suite,
  // where a 10-minute cap cut the file off while its own test still had time.
  const r = spawnSync(process.execPath, [...timesArgs, '--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=1500000', ...list], {
    cwd: path.join(home, 'work'),
    stdio: 'inherit',
    env: {
      ...process.env,
      KILN_DATA_DIR: path.join(home, 'data'),
      KILN_TMP_DIR: path.join(home, 'tmp'),
      XDG_CONFIG_HOME: path.join(home, 'config'),
      // Model downloads are verified by digest and kept between test files and runs (bundles are 100+ MB).
      KILN_AI_CACHE_DIR: process.env.KILN_AI_CACHE_DIR || path.join(tmpdir(), 'kiln-ai-cache'),
      // Two test files run at once, and onnxruntime gives each model a spinning thread per core: two AI
      // suites side by side then fight over the cores (the background and host suites together: 117 s,
      // 73 s with the cores shared out). Each model gets its share instead; the same code path runs.
      KILN_AI_THREADS: process.env.KILN_AI_THREADS || String(Math.max(1, Math.floor(availableParallelism() / CONCURRENCY))),
      ...(times && { KILN_TEST_TIMES: times }),
      ...extraEnv,
    },
  });
  const left = killLeftovers(path.join(home, 'tmp'));
  if (left) console.log(`# stopped ${left} process(es) the test files left running (daemons, engines of a killed test file)`);
  rmSync(home, { recursive: true, force: true });
  return r.status ?? 1;
}

/**
 * Processes still running with this run's KILN_TMP_DIR in their environment: `kiln serve` daemons and
 * engine processes a test file started and could not stop (it timed out, or crashed). Left alone they
 * outlived the run, kept their cores busy and slowed every later test on the machine. Linux only (/proc).
 */
function killLeftovers(tmpDir) {
  let killed = 0;
  let pids;
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid);
  } catch {
    return 0;
  }
  const mark = Buffer.from(`KILN_TMP_DIR=${tmpDir}\0`);
  for (const pid of pids) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`).includes(mark)) continue;
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      /* gone meanwhile, or not ours */
    }
  }
  return killed;
}

let status = runTests(files);
// The full run (no filter) runs the library, pipelines and job API suites once more with every test
// server's blobs in an s3rver bucket (KILN_TEST_S3=1, test/helpers/server.ts): the same routes on
// object storage. About a minute; KILN_TEST_S3=0 skips it, KILN_TEST_S3=1 already ran everything so.
const S3_SUITES = ['test/daemon/library/library.test.js', 'test/pipelines/http.test.js', 'test/daemon/prefer.test.js'];
if (!filter.length && !process.env.KILN_TEST_S3) {
  const s3Files = files.filter((f) => S3_SUITES.some((x) => f.endsWith(path.join('dist', x))));
  if (s3Files.length !== S3_SUITES.length) {
    console.error(`The object-storage pass lists ${S3_SUITES.join(', ')}; found only ${s3Files.length} of them.`);
    status ||= 1;
  } else {
    console.log('\n# The same library, pipelines and job API suites on object storage (KILN_TEST_S3=1)');
    const s3Status = runTests(s3Files, { KILN_TEST_S3: '1' });
    status ||= s3Status;
  }
}
if (times) printTimes(times);
process.exit(status);

/** The 25 longest test files of the runs logged in `file`, with their CPU time and share of the total. */
function printTimes(file) {
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))
    .map(([f, wall, cpu]) => ({
      name: path.relative(path.join(root, 'dist', 'test'), f),
      wall: Number(wall) / 1000,
      cpu: Number(cpu) / 1000,
    }));
  const total = rows.reduce((sum, r) => sum + r.wall, 0);
  const cpu = rows.reduce((sum, r) => sum + r.cpu, 0);
  console.log(`\n# ${rows.length} test files: ${total.toFixed(0)} s of wall time in all, ${cpu.toFixed(0)} s of CPU (${file})`);
  console.log('#   wall s  share   cpu s  file');
  for (const r of rows.sort((a, b) => b.wall - a.wall).slice(0, 25))
    console.log(
      `# ${r.wall.toFixed(1).padStart(8)} ${((100 * r.wall) / total).toFixed(1).padStart(5)}% ${r.cpu.toFixed(1).padStart(7)}  ${r.name}`,
    );
}
