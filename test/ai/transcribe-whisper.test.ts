/**
 * The Whisper path for real, through whisper.cpp (@fugood/whisper.node installed from its pinned npm
 * tarballs) on a tiny ggml model the test builds (test/ai/whisper-model.ts): Whisper's tensor set and
 * shapes, random weights. Its words are arbitrary; what is checked is everything around them: the
 * model loads, chunks decode with timestamps, long audio is cut into several 30 s chunks whose times
 * are offset and ordered, `language auto` detects, srt/vtt are written inside the audio, progress
 * runs, cancel answers mid-chunk, the model is released when idle, the result names the model that
 * ran (never "whisper-base" for this file), and a truncated file or a model whisper.cpp cannot run
 * answer with clear errors.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import transcriptionBundle from '../../src/ai/bundles/transcription.js';
import { modelHost } from '../../src/ai/host/host.js';
import { featureStatus } from '../../src/ai/features.js';
import { ARCHIVE_INDEX } from '../../src/ai/install/archive.js';
import { downloadsOf, installRuntime } from '../../src/ai/install/installer.js';
import { commitBundle, newStaging } from '../../src/ai/install/layout.js';
import { fetchTarball } from '../../src/ai/install/npm.js';
import { stagingDir } from '../../src/ai/paths.js';
import { loadedModels, runModel } from '../../src/ai/run-model.js';
import { findRuntime } from '../../src/ai/runtimes/list.js';
import { cueable } from '../../src/ai/tasks/subtitles.js';
import { transcribe } from '../../src/ai/tasks/transcribe.js';
import type { KilnError } from '../../src/core/errors.js';
import { exec } from '../../src/core/process.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { videoWithSound } from '../helpers/media.js';
import { sharedCacheDir } from './install-helper.js';
import { buildWhisperModel, tinyWhisperModelFile } from './whisper-model.js';

// Set before the model host's worker starts (it reads this once): models are freed 1 s after their
// last use, so the idle release runs within this suite.
process.env.KILN_AI_IDLE_S = '1';

const MODEL = 'ggml-base.bin';

/** Cue times of an srt or vtt file, seconds. */
function cueTimes(text: string): { start: number; end: number }[] {
  const t = (s: string) => {
    const [h, m, rest] = s.split(':');
    return Number(h) * 3600 + Number(m) * 60 + Number(rest!.replace(',', '.'));
  };
  return [...text.matchAll(/(\d\d:\d\d:\d\d[,.]\d{3}) --> (\d\d:\d\d:\d\d[,.]\d{3})/g)].map((m) => ({ start: t(m[1]!), end: t(m[2]!) }));
}

function assertOrderedInside(cues: { start: number; end: number }[], durationS: number, what: string) {
  assert.ok(cues.length >= 1, `${what}: no cues`);
  for (let i = 0; i < cues.length; i++) {
    const c = cues[i]!;
    assert.ok(c.start >= 0 && c.end > c.start, `${what}: cue ${i} is ${c.start}-${c.end}`);
    assert.ok(c.end <= durationS + 0.05, `${what}: cue ${i} ends at ${c.end}, after the audio (${durationS} s)`);
    if (i) assert.ok(c.start >= cues[i - 1]!.end - 1e-6, `${what}: cue ${i} starts before cue ${i - 1} ends`);
  }
}

/** A data dir with the whisper runtime installed from its pinned tarballs (shared download cache). */
async function withRuntime(dataDir: string): Promise<void> {
  await mkdir(stagingDir(dataDir), { recursive: true });
  await installRuntime(dataDir, findRuntime('whisper')!, (p) => fetchTarball(p, sharedCacheDir()));
}

/** Installs `model` as the bundle's file, the way an import commits a verified file (digest recorded). */
async function installModel(dataDir: string, model: Buffer | string): Promise<string> {
  const staged = await newStaging(dataDir, 'bundle-transcription-test');
  const dest = path.join(staged, MODEL);
  if (typeof model === 'string') await copyFile(model, dest);
  else await writeFile(dest, model);
  const bytes = await readFile(dest);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  await commitBundle(dataDir, staged, transcriptionBundle, [{ name: MODEL, size: bytes.length, sha256 }], 'import');
  return sha256;
}

describe('transcription on whisper.cpp (a tiny model built by the test)', () => {
  const dir = tempDir('kiln-whisper-');
  const dataDir = path.join(dir, 'data');
  let modelFile: string;
  let modelSha: string;
  let speech: string;
  let speechS: number;
  let long: string;
  let video: string;

  before(async () => {
    modelFile = await tinyWhisperModelFile();
    await withRuntime(dataDir);
    // Speech (espeak-ng), 8 kHz mu-law in a WAV: any format ffmpeg reads goes in.
    const raw = path.join(dir, 'raw.wav');
    await exec('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', raw, 'The weather is cold today. I would like a cup of coffee please.']);
    speech = path.join(dir, 'speech.wav');
    await exec('ffmpeg', ['-v', 'error', '-i', raw, '-af', 'apad=pad_dur=1', '-ar', '8000', '-c:a', 'pcm_mulaw', speech]);
    speechS = Number((await exec('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', speech])).stdout);
    // 75 s: the speech over and over with pauses, so the chunker cuts in pauses and makes 3 chunks.
    long = path.join(dir, 'long.flac');
    await exec('ffmpeg', ['-v', 'error', '-stream_loop', '-1', '-i', speech, '-t', '75', '-ac', '1', long]);
    video = videoWithSound(dir, 'talk.mp4', speech, speechS);
  });
  after(async () => {
    await modelHost.stop();
  });

  it('an archive carrying another file as ggml-base.bin is refused at import: the SHA-1 pin holds', async () => {
    const pack = await mkdtemp(path.join(dir, 'pack-'));
    await mkdir(path.join(pack, 'files'));
    await mkdir(path.join(pack, 'runtimes'));
    const bytes = await readFile(modelFile);
    await symlink(modelFile, path.join(pack, 'files', MODEL));
    const runtimes = [];
    for (const r of downloadsOf(transcriptionBundle).runtimes) {
      const packages = [];
      for (const p of r.packages) {
        const file = `${p.name.replace('/', '+')}-${p.version}.tgz`;
        await symlink(await fetchTarball(p, sharedCacheDir()), path.join(pack, 'runtimes', file));
        packages.push({ name: p.name, version: p.version, integrity: p.integrity, file });
      }
      runtimes.push({ id: r.id, version: r.version, packages });
    }
    const index = {
      format: 'kiln-bundle/1',
      bundle: 'transcription',
      version: transcriptionBundle.version,
      files: [{ name: MODEL, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
      runtimes,
    };
    await writeFile(path.join(pack, ARCHIVE_INDEX), JSON.stringify(index));
    const archive = path.join(dir, 'impostor.tar');
    await exec('tar', ['-chf', archive, '-C', pack, ARCHIVE_INDEX, 'files', 'runtimes']);
    const d = path.join(dir, 'import-data');
    const r = await kiln(['features', 'import', archive], { env: { KILN_DATA_DIR: d } });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /ggml-base\.bin in the archive does not match its pin .*SHA-1/);
    assert.equal((await featureStatus(d, 'transcription')).state, 'missing');
  });

  it('transcribe-audio -o out.srt: whisper.cpp decodes, cues ordered inside the audio, the result names the file that ran', async () => {
    modelSha = await installModel(dataDir, modelFile);
    const out = path.join(dir, 'out.srt');
    const r = await kiln(['transcribe-audio', speech, '-o', out, '--json'], { env: { KILN_DATA_DIR: dataDir } });
    assert.equal(r.code, 0, r.stderr);
    const data = (JSON.parse(r.stdout) as { data: Record<string, unknown> }).data;
    assert.equal(data.engine, 'whisper.cpp');
    // The file's own shape names it: a 64-wide one-layer model is not Whisper base.
    assert.equal(data.model, 'whisper-custom-64x1');
    assert.deepEqual(data.modelFile, { name: MODEL, sha256: modelSha });
    assert.equal(data.chunks, 1);
    assert.equal(data.device, 'cpu');
    assert.equal(data.warnings, undefined);
    const srt = await readFile(out, 'utf8');
    assert.match(srt, /^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n\S/);
    const cues = cueTimes(srt);
    assert.equal(cues.length, data.segments);
    assertOrderedInside(cues, speechS, 'srt');
    // Every cue carries the model's words (the vocabulary the test wrote: syllables).
    for (const block of srt.trim().split('\n\n')) assert.match(block.split('\n')[2] ?? '', /[a-z]{2}/, block);
  });

  it('long audio: three 30 s chunks cut in pauses, times offset into the whole, ordered; auto detects; progress runs to the end', async () => {
    const progress: number[] = [];
    const t = await transcribe(long, {
      toolId: 'transcribe-audio',
      dataDir,
      workDir: dir,
      language: 'auto',
      progress: (f) => progress.push(f),
    });
    assert.equal(t.engine, 'whisper.cpp');
    assert.equal(t.chunks, 3);
    assert.ok(Math.abs(t.durationS - 75) < 0.1, `${t.durationS} s`);
    assert.equal(t.languageDetected, true);
    assert.match(t.language, /^[a-z]{2,3}$/, t.language);
    assert.ok(t.segments.every((s) => s.start >= 0 && s.end <= t.durationS + 1e-6));
    assertOrderedInside(cueable(t.segments), t.durationS, 'long');
    // Each chunk contributed, at its own offset: segments in the first, second and last 30 s.
    for (const [from, to] of [
      [0, 28],
      [31, 58],
      [61, 75],
    ] as const)
      assert.ok(
        t.segments.some((s) => s.start >= from && s.start < to),
        `no segment starts in ${from}-${to} s: ${JSON.stringify(t.segments)}`,
      );
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]! >= progress[i - 1]! - 1e-9, `progress went back: ${progress}`);
    assert.equal(progress.at(-1), 1);
    assert.ok(
      progress.some((p) => p > 0.3 && p < 0.7),
      `no progress mid-way: ${progress}`,
    );
  });

  it('auto-subtitles writes WebVTT through whisper.cpp', async () => {
    const out = path.join(dir, 'talk.vtt');
    const r = await kiln(['auto-subtitles', video, '--format', 'vtt', '-o', out, '--json'], { env: { KILN_DATA_DIR: dataDir } });
    assert.equal(r.code, 0, r.stderr);
    const data = (JSON.parse(r.stdout) as { data: Record<string, unknown> }).data;
    assert.equal(data.engine, 'whisper.cpp');
    assert.equal(data.model, 'whisper-custom-64x1');
    assert.equal(data.languageDetected, true);
    const vtt = await readFile(out, 'utf8');
    assert.match(vtt, /^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> /);
    assertOrderedInside(cueTimes(vtt), speechS + 0.1, 'vtt');
  });

  it('cancel mid-chunk answers at once; the stopped chunk runs out, then the idle model is released without harm and loads again', async () => {
    const ac = new AbortController();
    const fractions: number[] = [];
    let calls = 0;
    let cancelledAt = 0;
    const run = transcribe(long, {
      toolId: 'transcribe-audio',
      dataDir,
      workDir: dir,
      language: 'en',
      signal: ac.signal,
      progress: (f) => {
        fractions.push(f);
        // The first call is the task's own (chunk 1 begins); the second is whisper.cpp's, at the start
        // of its first window, before it encodes: the whole chunk's work is still ahead.
        if (++calls === 2) {
          cancelledAt = performance.now();
          ac.abort();
        }
      },
    });
    // CANCELLED from the model host, or the signal's AbortError (runTool answers both as CANCELLED).
    await assert.rejects(run, (e: KilnError) => {
      assert.ok(e.code === 'CANCELLED' || e.name === 'AbortError', `${e.name} ${e.code}: ${e.message}`);
      return true;
    });
    assert.ok(cancelledAt > 0, `no progress from whisper.cpp: ${fractions}`);
    assert.ok(performance.now() - cancelledAt < 1000, `answered ${Math.round(performance.now() - cancelledAt)} ms after the cancel`);
    // The host keeps the model and its worker until the stopped chunk has run out in whisper.cpp;
    // then the idle release (1 s here) stops the worker. Stopping it under the running chunk
    // aborted this whole process (what a daemon did at its idle release after a cancelled job).
    const t0 = Date.now();
    while ((await loadedModels()).length && Date.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(await loadedModels(), [], 'still loaded 15 s after the cancel (idle 1 s)');
    const r = await runModel<{ model: string; segments: unknown[] }>(
      'whisper-base',
      { pcm: new Int16Array(16000 * 2), language: 'en' },
      { dataDir },
    );
    assert.equal(r.info.warm, false);
    assert.equal(r.output.model, 'whisper-custom-64x1');
    assert.deepEqual(await loadedModels(), ['whisper-base']);
  });

  // These two share one more data dir (one more runtime install): the second replaces its model.
  const bad = path.join(dir, 'bad');

  it('a truncated model file: FEATURE_NOT_INSTALLED (model-load) naming the reinstall', async () => {
    const d = bad;
    await withRuntime(d);
    const whole = await readFile(modelFile);
    await installModel(d, whole.subarray(0, Math.floor(whole.length * 0.6)));
    await assert.rejects(runModel('whisper-base', { pcm: new Int16Array(16000), language: 'en' }, { dataDir: d }), (e: KilnError) => {
      assert.equal(e.code, 'FEATURE_NOT_INSTALLED');
      assert.equal(e.reason, 'model-load');
      assert.match(e.message, /ggml-base\.bin could not be loaded .*kiln features install transcription/);
      return true;
    });
    const r = await kiln(['transcribe-audio', speech, '-o', path.join(dir, 't.srt')], { env: { KILN_DATA_DIR: d } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /could not be loaded/);
    assert.ok(!(await stat(path.join(dir, 't.srt')).catch(() => undefined)), 'no output written');
  });

  it('a model that loads but that whisper.cpp cannot run: the watchdog answers (the binding never settles a failure)', async () => {
    const d = bad;
    await installModel(d, buildWhisperModel(undefined, 14, { blankToken: false }));
    const t0 = performance.now();
    // `en`: no language detection first, so whisper.cpp reaches its failure sooner.
    const r = await kiln(['transcribe-audio', speech, '--language', 'en', '-o', path.join(dir, 'nb.txt')], {
      env: { KILN_DATA_DIR: d, KILN_WHISPER_CHUNK_TIMEOUT_S: '2' },
    });
    // INTERNAL's exit code, after the abandoned chunk has run out: no abort at exit (exit 134,
    // "terminate called", when the process tore down its worker under the running chunk).
    assert.equal(r.code, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /terminate called/);
    assert.match(r.stderr, /whisper\.cpp gave no answer within 2 s/);
    assert.ok(!(await stat(path.join(dir, 'nb.txt')).catch(() => undefined)), 'no output written');
    assert.ok(performance.now() - t0 < 30_000);
  });
});
