/** The progress screen while a run goes (Esc cancels it). */
import { Box, Text } from 'ink';
import { useKeys } from './use-latest.js';

export function Running({ name, percent, stage, onCancel }: { name: string; percent: number; stage?: string; onCancel: () => void }) {
  useKeys((_i, key) => {
    if (key.escape) onCancel();
  });
  const p = Math.max(0, Math.min(100, Math.round(percent)));
  const filled = Math.round(p / 5);
  return (
    <Box flexDirection="column">
      <Text>
        Running {name} <Text color="green">{'█'.repeat(filled)}</Text>
        <Text dimColor>{'░'.repeat(20 - filled)}</Text> {p}% {stage ?? ''}
      </Text>
      <Text dimColor>Esc cancel</Text>
    </Box>
  );
}
