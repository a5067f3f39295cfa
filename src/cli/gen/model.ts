/**
 * One description of the whole command line (tools, presets, commands, their flags, enum values and
 * file arguments), read from the very commander definitions kiln parses with. Completions and the man
 * page are printed from it, so they cannot drift from the CLI.
 */
import type { Command, Option } from 'commander';
import { describeSettings, type SettingInfo } from '../../core/settings.js';
import type { Tool } from '../../core/tool.js';
import { findTool, TOOLS } from '../../tools/index.js';
import { PRESETS, presetTool } from '../../tools/presets.js';
import { topProgram } from '../program.js';
import { buildToolCommand } from '../tool-command.js';

export type ValueKind = 'none' | 'text' | 'file' | 'dir';

export interface FlagSpec {
  long: string;
  short?: string;
  value: ValueKind;
  /** Value placeholder as in --help (`<n>`, `<file>`), empty for switches. */
  placeholder: string;
  choices?: string[];
  description: string;
}

export interface CommandSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** Positional arguments: what to complete and how to show them. */
  args: { name: string; required: boolean; variadic: boolean; value: ValueKind; choices?: string[] }[];
  subcommands: CommandSpec[];
  /** Tools and presets only. */
  tool?: Tool;
  preset?: boolean;
  settings?: SettingInfo[];
}

function valueKind(o: Option): ValueKind {
  if (o.isBoolean() || (o.optional && /\[bool\]/.test(o.flags))) return 'none';
  const ph = o.flags.replace(/^.*?[<[]/, '').replace(/[>\]].*$/, '');
  if (/^(file|files|path)/.test(ph)) return 'file';
  if (/^dir/.test(ph) || /-dir$/.test(o.long ?? '')) return 'dir';
  return 'text';
}

function flagSpec(o: Option): FlagSpec {
  const m = /[<[][^>\]]*[>\]]/.exec(o.flags);
  return {
    long: o.long ?? '',
    short: o.short,
    value: valueKind(o),
    placeholder: m ? m[0] : '',
    choices: o.argChoices,
    description: o.description,
  };
}

function commandSpec(cmd: Command, extra: Partial<CommandSpec> = {}): CommandSpec {
  const flags = cmd.options.filter((o) => o.long && !o.hidden).map(flagSpec);
  flags.push({ long: '--help', short: '-h', value: 'none', placeholder: '', description: 'show help' });
  return {
    name: cmd.name(),
    description: cmd.description(),
    flags,
    args: cmd.registeredArguments.map((a) => ({
      name: a.name(),
      required: a.required,
      variadic: a.variadic,
      value: /^(inputs|file)/.test(a.name()) ? 'file' : 'text',
      choices: a.argChoices,
    })),
    subcommands: cmd.commands.map((c) => commandSpec(c)),
    ...extra,
  };
}

/** Tools, then the presets whose base tool is built, then the other commands; each group sorted. */
export function cliModel(): { tools: CommandSpec[]; presets: CommandSpec[]; commands: CommandSpec[] } {
  const tools = TOOLS.map((t) => {
    const spec = commandSpec(buildToolCommand(t), { tool: t, settings: describeSettings(t) });
    if (t.input.kind === 'none') spec.args = spec.args.map((a) => ({ ...a, value: 'text' }));
    return spec;
  });
  const presets: CommandSpec[] = [];
  for (const p of [...PRESETS].sort((a, b) => a.id.localeCompare(b.id))) {
    const base = findTool(p.tool);
    if (!base) continue;
    const tool = presetTool(p, base);
    presets.push(commandSpec(buildToolCommand(tool, p.id), { tool, preset: true, settings: describeSettings(tool) }));
  }
  const commands = topProgram()
    .commands.map((c) => commandSpec(c))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { tools, presets, commands };
}
