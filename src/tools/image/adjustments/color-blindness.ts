import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { linearToSrgb8, outputFormat, readRgba, SRGB_TO_LINEAR, writeRaw } from '../_shared/pixels.js';

/**
 * Simulation matrices of Machado, Oliveira & Fernandes, "A Physiologically-based Model for Simulation of
 * Color Vision Deficiency", IEEE TVCG 15(6), 2009 (supplementary table), applied to linear RGB. The
 * dichromacies use severity 1.0; the anomalous trichromacies use severity 0.6 (a typical, moderate case).
 */
const MACHADO: Record<string, number[]> = {
  protanopia: [0.152286, 1.052583, -0.204868, 0.114503, 0.786281, 0.099216, -0.003882, -0.048116, 1.051998],
  deuteranopia: [0.367322, 0.860646, -0.227968, 0.280085, 0.672501, 0.047413, -0.01182, 0.04294, 0.968881],
  tritanopia: [1.255528, -0.076749, -0.178779, -0.078411, 0.930809, 0.147602, 0.004733, 0.691367, 0.3039],
  protanomaly: [0.38545, 0.769005, -0.154455, 0.100526, 0.829802, 0.069673, -0.007442, -0.02219, 1.029632],
  deuteranomaly: [0.547494, 0.607765, -0.155259, 0.181692, 0.781742, 0.036566, -0.01041, 0.027275, 0.983136],
  tritanomaly: [1.104996, -0.046633, -0.058363, -0.032137, 0.971635, 0.060503, 0.001336, 0.317922, 0.680742],
};

/**
 * Monochromacies have no colour discrimination, so every pixel becomes one intensity:
 * - achromatopsia (rod monochromacy): relative luminance Y of linear sRGB (ITU-R BT.709 weights);
 * - blue-cone monochromacy: in daylight the rods saturate and only S-cones signal, so the intensity is the
 *   S-cone response, from the linear-sRGB→LMS matrix of Viénot, Brettel & Mollon (Color Res. Appl. 24(4),
 *   1999), normalised so white stays white.
 */
const MONO: Record<string, [number, number, number]> = {
  achromatopsia: [0.2126, 0.7152, 0.0722],
  blueConeMonochromacy: normalise([0.0299566, 0.184309, 1.46709]),
};

function normalise(w: [number, number, number]): [number, number, number] {
  const s = w[0] + w[1] + w[2];
  return [w[0] / s, w[1] / s, w[2] / s];
}

export const SIMULATION_TYPES = [
  'protanopia',
  'deuteranopia',
  'tritanopia',
  'protanomaly',
  'deuteranomaly',
  'tritanomaly',
  'achromatopsia',
  'blueConeMonochromacy',
] as const;

export default defineTool({
  id: 'color-blindness',
  section: 'image',
  group: 'adjustments',
  summary: 'Simulate how an image looks with one of eight color-vision deficiencies.',
  description:
    'Dichromacies and anomalous trichromacies use the Machado et al. (2009) matrices (severity 1.0 and 0.6) in linear RGB; ' +
    'achromatopsia keeps relative luminance; blue-cone monochromacy keeps the S-cone response (Viénot et al. 1999 LMS).',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    simulationType: z.enum(SIMULATION_TYPES).default('deuteranomaly').describe('Deficiency to simulate.'),
  }),
  output: 'image in the input format',
  examples: ['chart.png --simulation-type protanopia'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const raw = await readRgba(input, ctx.workDir);
    const d = raw.data;
    const L = SRGB_TO_LINEAR;
    const mono = MONO[s.simulationType];
    const m = MACHADO[s.simulationType];
    for (let i = 0; i < d.length; i += 4) {
      const r = L[d[i]!]!;
      const g = L[d[i + 1]!]!;
      const b = L[d[i + 2]!]!;
      if (mono) {
        const v = linearToSrgb8(mono[0] * r + mono[1] * g + mono[2] * b);
        d[i] = d[i + 1] = d[i + 2] = v;
      } else {
        d[i] = linearToSrgb8(m![0]! * r + m![1]! * g + m![2]! * b);
        d[i + 1] = linearToSrgb8(m![3]! * r + m![4]! * g + m![5]! * b);
        d[i + 2] = linearToSrgb8(m![6]! * r + m![7]! * g + m![8]! * b);
      }
    }
    return { outputs: [await writeRaw(ctx, raw, outputFormat(input))] };
  },
});
