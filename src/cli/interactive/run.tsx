/** Entry of the interactive mode (`kiln` with no arguments on a terminal). */
import { render } from 'ink';
import { App } from './app.js';

export async function runInteractive(): Promise<void> {
  let code = 0;
  const app = render(<App onExit={(c) => (code = c)} />, { exitOnCtrlC: true });
  await app.waitUntilExit();
  process.exitCode = code;
}
