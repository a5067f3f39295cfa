/**
 * The interactive mode: search a tool, pick input files (Tab completes paths), fill in settings
 * (defaults shown, checked with the tool's own schema before the run), run it with live progress
 * through the same local runner as the command line, and show where the outputs went. One module per
 * screen; this one holds the state and moves between them.
 */
import path from 'node:path';
import { Box, Text, useApp } from 'ink';
import { useEffect, useMemo, useRef, useState } from 'react';
import { toKilnError } from '../../core/errors.js';
import { batchExitCode, expandInputs, runLocal, type ItemResult } from '../local-runner.js';
import { choices, type Choice } from './catalog.js';
import { Done } from './done.js';
import { FilePicker } from './file-picker.js';
import { Running } from './running.js';
import { SettingsForm } from './settings-form.js';
import { ToolPicker } from './tool-picker.js';

type Screen = 'tool' | 'files' | 'settings' | 'running' | 'done';

export interface AppProps {
  cwd?: string;
  /** Called with the exit status of the last run when the app quits. */
  onExit?: (code: number) => void;
}

export function App({ cwd = process.cwd(), onExit }: AppProps) {
  const { exit } = useApp();
  const all = useMemo(() => choices(), []);
  const [screen, setScreen] = useState<Screen>('tool');
  const [choice, setChoice] = useState<Choice>();
  const [files, setFiles] = useState<string[]>([]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [results, setResults] = useState<ItemResult[]>([]);
  const [fatal, setFatal] = useState<string>();
  const [progress, setProgress] = useState<{ percent: number; stage?: string }>({ percent: 0 });
  const lastCode = useRef(0);
  const abort = useRef<AbortController | undefined>(undefined);

  useEffect(() => () => abort.current?.abort(), []);

  const quit = () => {
    onExit?.(lastCode.current);
    exit();
  };

  const start = async (settings: Record<string, unknown>, extra: Record<string, string[]>, output: string | undefined) => {
    const c = choice!;
    setScreen('running');
    setProgress({ percent: 0 });
    setFatal(undefined);
    const ac = new AbortController();
    abort.current = ac;
    try {
      const inputs = await expandInputs(files.map((f) => path.resolve(cwd, f)));
      const r = await runLocal({
        tool: c.tool,
        name: c.name,
        inputs,
        extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v.map((p) => path.resolve(cwd, p))])),
        settings,
        output: output ? path.resolve(cwd, output) + (output.endsWith('/') ? '/' : '') : undefined,
        quiet: true,
        printData: false,
        signal: ac.signal,
        onProgress: (percent, stage) => setProgress({ percent, stage }),
      });
      setResults(r);
      lastCode.current = batchExitCode(r);
    } catch (e) {
      const err = toKilnError(e);
      setFatal(`${err.message} (${err.code})`);
      lastCode.current = err.exitCode;
    }
    setScreen('done');
  };

  return (
    <Box flexDirection="column">
      <Text bold color="cyan">
        kiln{choice && screen !== 'tool' ? ` › ${choice.name}` : ''}
      </Text>
      {screen === 'tool' && (
        <ToolPicker
          all={all}
          onPick={(c) => {
            setChoice(c);
            setValues({});
            setFiles([]);
            setScreen(c.tool.input.kind === 'none' ? 'settings' : 'files');
          }}
          onQuit={quit}
        />
      )}
      {screen === 'files' && choice && (
        <FilePicker
          choice={choice}
          cwd={cwd}
          files={files}
          setFiles={setFiles}
          onDone={() => setScreen('settings')}
          onBack={() => setScreen('tool')}
        />
      )}
      {screen === 'settings' && choice && (
        <SettingsForm
          choice={choice}
          cwd={cwd}
          values={values}
          setValues={setValues}
          onRun={start}
          onBack={() => setScreen(choice.tool.input.kind === 'none' ? 'tool' : 'files')}
        />
      )}
      {screen === 'running' && (
        <Running name={choice!.name} percent={progress.percent} stage={progress.stage} onCancel={() => abort.current?.abort()} />
      )}
      {screen === 'done' && (
        <Done
          results={results}
          fatal={fatal}
          cwd={cwd}
          onAgain={() => setScreen('settings')}
          onNew={() => {
            setChoice(undefined);
            setScreen('tool');
          }}
          onQuit={quit}
        />
      )}
    </Box>
  );
}
