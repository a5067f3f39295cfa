/**
 * A pipeline (saved or ad hoc) as a run target. Built where the request is validated and again by
 * the worker that runs the job in scaled mode (the queue carries the definition, not the closure).
 */
import { isBatchable } from '../../src/core/tool.js';
import { pipelineTool, validatePipeline, type ResolvedStep } from '../../src/pipelines/pipeline.js';
import { redactSettings } from './records.js';
import type { Target } from './targets.js';

export interface PipelineTarget {
  target: Target;
  /** What the job record keeps as its settings: the steps, secrets redacted. */
  record: Record<string, unknown>;
}

export function pipelineTarget(raw: unknown, fallbackName?: string): PipelineTarget {
  const { pipeline, steps } = validatePipeline(raw);
  const name = pipeline.name ?? fallbackName ?? 'pipeline';
  const tool = pipelineTool(steps, name);
  return {
    target: { id: `pipeline:${name}`, section: tool.section, tool, batchable: isBatchable(tool) },
    record: { pipeline: name, steps: steps.map((s: ResolvedStep) => ({ tool: s.tool.id, settings: redactSettings(s.settings) })) },
  };
}
