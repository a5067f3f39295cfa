import { allEngineStatus } from '../../engines/registry.js';
import { ffmpegDoctorNotes } from '../../engines/ffmpeg/capabilities.js';
import { TOOLS } from '../../tools/index.js';
import { defaultDataDir } from '../../core/paths.js';
import { listFeatures } from '../../ai/features.js';

export async function doctorCommand(o: { json?: boolean }): Promise<void> {
  const engines = await allEngineStatus();
  const missing = engines.filter((e) => !e.available);
  const toolsAffected = (id: string) => TOOLS.filter((t) => t.needs?.engines?.includes(id)).map((t) => t.id);
  // Optional parts of the ffmpeg build (vidstab, rubberband, libass, drawtext).
  const ffmpegNotes = engines.find((e) => e.id === 'ffmpeg')?.available ? await ffmpegDoctorNotes() : [];
  // Feature bundles of the AI tools, in this machine's data dir.
  const features = (await listFeatures(defaultDataDir())).map((f) => ({
    id: f.id,
    state: f.state,
    version: f.installed?.version,
    tools: f.tools,
  }));
  if (o.json) {
    process.stdout.write(
      JSON.stringify(
        { node: process.version, engines: engines.map((e) => ({ ...e, tools: toolsAffected(e.id) })), ffmpegNotes, features },
        null,
        2,
      ) + '\n',
    );
    return;
  }
  process.stdout.write(`node ${process.version}\n\n`);
  const w = Math.max(...engines.map((e) => e.title.length));
  for (const e of engines) {
    process.stdout.write(
      `${e.available ? 'ok     ' : 'MISSING'} ${e.title.padEnd(w)}  ${e.available ? (e.version ?? '') : `install: ${e.install}`}\n`,
    );
  }
  for (const n of ffmpegNotes) process.stdout.write(`note    ${n}\n`);
  if (missing.length) {
    process.stdout.write(`\n${missing.length} engine(s) missing. Tools that need them fail with ENGINE_MISSING (exit 4):\n`);
    for (const m of missing) {
      const t = toolsAffected(m.id);
      process.stdout.write(`  ${m.title}: ${t.length ? t.join(', ') : 'no tool uses it yet'}\n`);
    }
    process.stdout.write('Install everything at once with: npm run setup (as root)\n');
  } else {
    process.stdout.write('\nAll engines found.\n');
  }
  process.stdout.write('\nFeature bundles (AI tools; `kiln features` for sizes and licences):\n');
  const fw = Math.max(...features.map((f) => f.id.length));
  for (const f of features) {
    const hint =
      f.state === 'missing'
        ? `  install: kiln features install ${f.id}`
        : f.state === 'damaged'
          ? `  files damaged on disk; install again: kiln features install ${f.id}`
          : '';
    process.stdout.write(`  ${f.id.padEnd(fw)}  ${f.state}${f.version ? ` ${f.version}` : ''}${hint}\n`);
  }
}
