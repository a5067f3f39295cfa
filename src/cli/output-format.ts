/**
 * The output's format follows the output's file name (`-o out.png`), so a script never gets JPEG bytes
 * in a .png. Before the run, a tool with a format setting gets the format the name asks for (a format
 * given as well must agree). After the run, an output of another format is converted with the catalog's
 * own converter when the tool has no notion of format (resize, rotate…), and refused otherwise: a name
 * and a format that disagree are a usage error, never a mislabeled file.
 */
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { canonicalFormat, formatChoice, formatFamily, formatOfFileName } from '../core/formats.js';
import { describeSettings } from '../core/settings.js';
import type { OutputFile, Tool } from '../core/tool.js';
import { loadTool } from '../tools/lazy.js';
import { inputFile, runTool } from '../tools/run-tool.js';

const FORMAT_SETTINGS = ['format', 'outputFormat'];

/** The tool's output-format setting: its name and choices, when its choices are file formats. */
export function formatSetting(tool: Tool): { name: string; choices: string[] } | undefined {
  for (const s of describeSettings(tool)) {
    if (!FORMAT_SETTINGS.includes(s.name) || !s.enum) continue;
    const choices = s.enum.map(String);
    if (choices.some((c) => canonicalFormat(c))) return { name: s.name, choices };
  }
  return undefined;
}

const upper = (f: string) => f.toUpperCase();

/** Settings with the format the output file's name asks for. */
export function formatFromOutputName(
  tool: Tool,
  name: string,
  settings: Record<string, unknown>,
  outPath: string,
): Record<string, unknown> {
  const wanted = formatOfFileName(outPath);
  const fs = formatSetting(tool);
  if (!wanted || !fs) return settings;
  const family = formatFamily(wanted);
  // A setting whose formats are of another kind (video-to-frames' frame format, for a ZIP) is not the output's.
  if (!fs.choices.some((c) => formatFamily(c) === family)) return settings;
  const given = settings[fs.name];
  if (given !== undefined) {
    if (typeof given === 'string' && canonicalFormat(given) !== wanted && canonicalFormat(given) !== undefined)
      throw new KilnError(
        'USAGE_ERROR',
        `--${fs.name === 'format' ? 'format' : 'output-format'} ${given} disagrees with the output name ${path.basename(outPath)}: name it .${canonicalFormat(given)} or drop the flag.`,
      );
    return settings;
  }
  const choice = formatChoice(fs.choices, wanted);
  if (!choice)
    throw new KilnError(
      'USAGE_ERROR',
      `${name} cannot write ${upper(wanted)} (${path.basename(outPath)}); it writes ${fs.choices.join(', ')}.`,
      {
        details: [{ path: fs.name, message: `no ${wanted} output` }],
      },
    );
  return { ...settings, [fs.name]: choice };
}

const CONVERTERS: Partial<Record<string, string>> = { image: 'convert', audio: 'convert-audio', video: 'convert-video' };

/**
 * Checks a finished output against the name it will be written under; converts it (into `workDir`)
 * when that is the tool's intent, else refuses. Nothing has been written to the destination yet.
 */
export async function conformOutput(
  tool: Tool,
  name: string,
  output: OutputFile,
  outPath: string,
  opts: { workDir: string; dataDir: string; signal: AbortSignal },
): Promise<OutputFile> {
  const wanted = formatOfFileName(outPath);
  const actual = formatOfFileName(output.name);
  if (!wanted || !actual || wanted === actual) return output;
  const family = formatFamily(actual);
  const fixed = !!formatSetting(tool) || tool.presetOf?.fixed.format !== undefined;
  const converterId = family === formatFamily(wanted) && !fixed ? CONVERTERS[family!] : undefined;
  const refuse = (why = '') =>
    new KilnError(
      'USAGE_ERROR',
      `${name} wrote ${upper(actual)} here, but the output is named ${path.basename(outPath)}: name it .${actual}${formatSetting(tool) ? ` or choose --${formatSetting(tool)!.name === 'format' ? 'format' : 'output-format'}` : ''}${why}.`,
      { details: [{ path: 'output', message: `${actual} output, ${wanted} name` }] },
    );
  if (!converterId) throw refuse();
  if (family === 'video') {
    // convert-video keeps the first video and audio stream only: embed-subtitles' track (-o soft.mkv from
    // an MP4) was silently dropped, exit 0. A conversion that would lose a subtitle track is refused.
    const { probe } = await import('../engines/ffmpeg/probe.js');
    const subtitles = (await probe(output.path, { signal: opts.signal, name: output.name })).subtitles.length;
    if (subtitles > 0) throw refuse(` (converting to ${upper(wanted)} would drop its subtitle track${subtitles === 1 ? '' : 's'})`);
  }
  const converter = await loadTool(converterId);
  const fs = converter && formatSetting(converter);
  const choice = fs && formatChoice(fs.choices, wanted);
  if (!converter || !fs || !choice) throw refuse();
  const outcome = await runTool(
    converter,
    { files: [await inputFile(output.path, output.name)], extra: {} },
    { [fs.name]: choice },
    {
      workDir: path.join(opts.workDir, 'conform'),
      dataDir: opts.dataDir,
      signal: opts.signal,
    },
  );
  if (!outcome.output) throw refuse();
  return outcome.output;
}
