/** The generated files and their contents: one list for scripts/generate.ts and the staleness test. */
import { bashCompletion, fishCompletion, zshCompletion } from './completion.js';
import { manPage } from './manpage.js';
import { mcpToolsPage } from './mcp-tools.js';

export function generatedFiles(): Record<string, string> {
  return {
    'completions/kiln.bash': bashCompletion(),
    'completions/_kiln': zshCompletion(),
    'completions/kiln.fish': fishCompletion(),
    'man/kiln.1': manPage(),
    'docs/MCP-TOOLS.md': mcpToolsPage(),
  };
}
