/**
 * kiln's own meme templates: plain shapes drawn as SVG for this project (no third-party images), each with
 * named text boxes in pixels. Layouts echo well-known meme formats without copying any picture.
 */
export interface MemeBox {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
  /** Where the text sits inside its box. */
  valign: 'top' | 'middle' | 'bottom';
}

export interface MemeTemplate {
  id: string;
  name: string;
  width: number;
  height: number;
  svg: string;
  boxes: MemeBox[];
}

const svg = (w: number, h: number, body: string) => `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`;
const face = (cx: number, cy: number, r: number, mood: 'happy' | 'sad' | 'neutral', skin = '#f2c28b') =>
  `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${skin}" stroke="#5a3b1a" stroke-width="4"/>` +
  `<circle cx="${cx - r / 3}" cy="${cy - r / 5}" r="${r / 9}" fill="#222"/><circle cx="${cx + r / 3}" cy="${cy - r / 5}" r="${r / 9}" fill="#222"/>` +
  (mood === 'happy'
    ? `<path d="M${cx - r / 2},${cy + r / 4} Q${cx},${cy + (3 * r) / 4} ${cx + r / 2},${cy + r / 4}" stroke="#222" stroke-width="5" fill="none"/>`
    : mood === 'sad'
      ? `<path d="M${cx - r / 2},${cy + r / 2} Q${cx},${cy + r / 8} ${cx + r / 2},${cy + r / 2}" stroke="#222" stroke-width="5" fill="none"/>`
      : `<line x1="${cx - r / 2}" y1="${cy + r / 3}" x2="${cx + r / 2}" y2="${cy + r / 3}" stroke="#222" stroke-width="5"/>`);

export const MEME_TEMPLATES: MemeTemplate[] = [
  {
    id: 'classic',
    name: 'Classic: one picture, top and bottom text',
    width: 600,
    height: 600,
    svg: svg(
      600,
      600,
      `<defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#4a90d9"/><stop offset="1" stop-color="#1c3f6e"/></linearGradient></defs><rect width="600" height="600" fill="url(#g)"/>${face(300, 310, 130, 'neutral')}`,
    ),
    boxes: [
      { id: 'top', x: 20, y: 10, w: 560, h: 140, valign: 'top' },
      { id: 'bottom', x: 20, y: 450, w: 560, h: 140, valign: 'bottom' },
    ],
  },
  {
    id: 'approve-reject',
    name: 'Approve / reject (two rows: a no and a yes, text on the right)',
    width: 700,
    height: 700,
    svg: svg(
      700,
      700,
      `<rect width="700" height="700" fill="#fff"/><rect width="350" height="350" fill="#f6d7a7"/><rect y="350" width="350" height="350" fill="#cfe8c4"/>` +
        `${face(175, 175, 110, 'sad')}<line x1="70" y1="70" x2="280" y2="280" stroke="#d62828" stroke-width="18"/><line x1="280" y1="70" x2="70" y2="280" stroke="#d62828" stroke-width="18"/>` +
        `${face(175, 525, 110, 'happy')}<path d="M80,530 L150,600 L290,440" stroke="#2a9d3a" stroke-width="20" fill="none"/><line x1="0" y1="350" x2="700" y2="350" stroke="#333" stroke-width="4"/><line x1="350" y1="0" x2="350" y2="700" stroke="#333" stroke-width="4"/>`,
    ),
    boxes: [
      { id: 'top', x: 370, y: 20, w: 310, h: 310, valign: 'middle' },
      { id: 'bottom', x: 370, y: 370, w: 310, h: 310, valign: 'middle' },
    ],
  },
  {
    id: 'two-panel',
    name: 'Two panels, one above the other',
    width: 600,
    height: 700,
    svg: svg(
      600,
      700,
      `<rect width="600" height="350" fill="#ffb703"/><rect y="350" width="600" height="350" fill="#219ebc"/>${face(300, 200, 90, 'neutral')}${face(300, 550, 90, 'happy')}<line x1="0" y1="350" x2="600" y2="350" stroke="#000" stroke-width="6"/>`,
    ),
    boxes: [
      { id: 'top', x: 20, y: 10, w: 560, h: 90, valign: 'top' },
      { id: 'bottom', x: 20, y: 360, w: 560, h: 90, valign: 'top' },
    ],
  },
  {
    id: 'comparison',
    name: 'Side-by-side comparison',
    width: 800,
    height: 500,
    svg: svg(
      800,
      500,
      `<rect width="400" height="500" fill="#e63946"/><rect x="400" width="400" height="500" fill="#457b9d"/>${face(200, 320, 100, 'sad')}${face(600, 320, 100, 'happy')}<line x1="400" y1="0" x2="400" y2="500" stroke="#fff" stroke-width="8"/>`,
    ),
    boxes: [
      { id: 'left', x: 20, y: 15, w: 360, h: 180, valign: 'top' },
      { id: 'right', x: 420, y: 15, w: 360, h: 180, valign: 'top' },
    ],
  },
  {
    id: 'four-panel',
    name: 'Four-panel comic',
    width: 700,
    height: 700,
    svg: svg(
      700,
      700,
      `<rect width="700" height="700" fill="#222"/>` +
        ['#8ecae6', '#ffb703', '#fb8500', '#90be6d']
          .map((c, i) => `<rect x="${10 + (i % 2) * 345}" y="${10 + Math.floor(i / 2) * 345}" width="335" height="335" fill="${c}"/>`)
          .join('') +
        face(177, 240, 70, 'neutral') +
        face(522, 240, 70, 'happy') +
        face(177, 585, 70, 'sad') +
        face(522, 585, 70, 'happy'),
    ),
    boxes: [0, 1, 2, 3].map((i) => ({
      id: `panel${i + 1}`,
      x: 20 + (i % 2) * 345,
      y: 15 + Math.floor(i / 2) * 345,
      w: 315,
      h: 130,
      valign: 'top' as const,
    })),
  },
  {
    id: 'escalation',
    name: 'Four rising levels (text left, ever brighter light right)',
    width: 700,
    height: 800,
    svg: svg(
      700,
      800,
      `<rect width="700" height="800" fill="#fff"/>` +
        [0, 1, 2, 3]
          .map(
            (i) =>
              `<rect x="350" y="${i * 200}" width="350" height="200" fill="${['#2b2d42', '#5c4d7d', '#b5838d', '#ffd166'][i]}"/><circle cx="525" cy="${i * 200 + 100}" r="${30 + i * 18}" fill="#fff" fill-opacity="${0.3 + i * 0.23}"/>`,
          )
          .join('') +
        [1, 2, 3].map((i) => `<line x1="0" y1="${i * 200}" x2="700" y2="${i * 200}" stroke="#000" stroke-width="4"/>`).join(''),
    ),
    boxes: [0, 1, 2, 3].map((i) => ({ id: `level${i + 1}`, x: 15, y: i * 200 + 15, w: 320, h: 170, valign: 'middle' as const })),
  },
  {
    id: 'sign',
    name: 'Someone holding a blank sign',
    width: 600,
    height: 600,
    svg: svg(
      600,
      600,
      `<rect width="600" height="600" fill="#a8dadc"/><rect y="470" width="600" height="130" fill="#6a994e"/><rect x="285" y="330" width="30" height="200" fill="#7f5539"/>` +
        `<rect x="90" y="60" width="420" height="280" rx="12" fill="#fffdf5" stroke="#7f5539" stroke-width="10"/>${face(300, 470, 60, 'happy')}`,
    ),
    boxes: [{ id: 'sign', x: 115, y: 85, w: 370, h: 230, valign: 'middle' }],
  },
  {
    id: 'two-buttons',
    name: 'Two buttons and a hard choice',
    width: 600,
    height: 700,
    svg: svg(
      600,
      700,
      `<rect width="600" height="700" fill="#f1faee"/><rect x="40" y="40" width="520" height="300" rx="20" fill="#ced4da"/>` +
        `<ellipse cx="180" cy="190" rx="110" ry="70" fill="#d62828" stroke="#6a040f" stroke-width="8"/><ellipse cx="420" cy="190" rx="110" ry="70" fill="#d62828" stroke="#6a040f" stroke-width="8"/>${face(300, 520, 120, 'sad')}`,
    ),
    boxes: [
      { id: 'left', x: 80, y: 140, w: 200, h: 100, valign: 'middle' },
      { id: 'right', x: 320, y: 140, w: 200, h: 100, valign: 'middle' },
      { id: 'bottom', x: 20, y: 610, w: 560, h: 80, valign: 'middle' },
    ],
  },
];

export const MEME_TEMPLATE_IDS = MEME_TEMPLATES.map((t) => t.id) as [string, ...string[]];

export const TEXT_LAYOUTS = ['top-bottom', 'top-only', 'bottom-only', 'center', 'side-by-side'] as const;
export type TextLayout = (typeof TEXT_LAYOUTS)[number];

/** Text boxes of the custom-image mode, from the image size and the chosen layout. */
export function layoutBoxes(layout: TextLayout, W: number, H: number): MemeBox[] {
  const m = Math.round(Math.min(W, H) * 0.03);
  const band = Math.round(H * 0.25);
  const top: MemeBox = { id: 'top', x: m, y: m, w: W - 2 * m, h: band - m, valign: 'top' };
  const bottom: MemeBox = { id: 'bottom', x: m, y: H - band, w: W - 2 * m, h: band - m, valign: 'bottom' };
  switch (layout) {
    case 'top-bottom':
      return [top, bottom];
    case 'top-only':
      return [top];
    case 'bottom-only':
      return [bottom];
    case 'center':
      return [{ id: 'center', x: m, y: Math.round(H * 0.3), w: W - 2 * m, h: Math.round(H * 0.4), valign: 'middle' }];
    case 'side-by-side':
      return [
        { id: 'left', x: m, y: m, w: Math.round(W / 2) - 2 * m, h: H - 2 * m, valign: 'middle' },
        { id: 'right', x: Math.round(W / 2) + m, y: m, w: Math.round(W / 2) - 2 * m, h: H - 2 * m, valign: 'middle' },
      ];
  }
}
