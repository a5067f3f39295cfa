/** The result screen: each input with its output or error; run again, start anew or quit. */
import path from 'node:path';
import { Box, Text } from 'ink';
import type { ItemResult } from '../local-runner.js';
import { useKeys } from './use-latest.js';

export function Done({
  results,
  fatal,
  cwd,
  onAgain,
  onNew,
  onQuit,
}: {
  results: ItemResult[];
  fatal?: string;
  cwd: string;
  onAgain: () => void;
  onNew: () => void;
  onQuit: () => void;
}) {
  useKeys((input, key) => {
    if (input === 'q' || key.escape) onQuit();
    else if (key.return || input === 'n') onNew();
    else if (input === 'a') onAgain();
  });
  return (
    <Box flexDirection="column">
      {fatal ? <Text color="red">✖ {fatal}</Text> : null}
      {results.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list of results, shown once
        <Box key={i} flexDirection="column">
          {r.ok ? (
            <Text color="green">
              ✔ {r.input ? `${path.relative(cwd, r.input) || r.input} → ` : ''}
              {r.output ? path.relative(cwd, r.output) || r.output : 'done'}
              {r.output ? <Text dimColor> ({r.output})</Text> : null}
            </Text>
          ) : (
            <Text color="red">
              ✖ {r.input ? `${path.relative(cwd, r.input) || r.input}: ` : ''}
              {r.error!.message} ({r.error!.code})
            </Text>
          )}
          {r.data ? <Text dimColor>{JSON.stringify(r.data).slice(0, 300)}</Text> : null}
        </Box>
      ))}
      <Text dimColor>Enter new run · a same tool again · q quit</Text>
    </Box>
  );
}
