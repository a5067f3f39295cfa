/**
 * A throwaway tool for tests of runTool itself (failure mapping, input handling): no settings, one file
 * input of `accept`, and the `run` given. Not in the catalog.
 */
import { z } from 'zod';
import { defineTool, type RunContext, type Tool, type ToolInputs, type ToolResult } from '../../src/core/tool.js';

export function testTool(
  id: string,
  accept: string,
  run: (ctx: RunContext, inputs: ToolInputs) => Promise<ToolResult>,
  section: 'image' | 'audio' = accept.startsWith('audio') ? 'audio' : 'image',
): Tool {
  return defineTool({
    id,
    section,
    group: section === 'audio' ? 'audio' : 'utilities',
    summary: 'test',
    description: 'test',
    input: { kind: 'file', accept: [accept] },
    settings: z.object({}),
    output: 'none',
    examples: [],
    run,
  } as never) as unknown as Tool;
}
