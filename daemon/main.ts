import { KilnError } from '../src/core/errors.js';
import type { ServeOptions } from '../src/cli/commands/serve.js';

// Replaced by the daemon implementation (Foundation issue); kept so the CLI compiles meanwhile.
export async function serveFromCli(_o: ServeOptions): Promise<void> {
  throw new KilnError('INTERNAL', 'The daemon is not built yet.');
}
