/**
 * Passport, ID and visa photo rules by country. Sizes in millimetres; head = chin to crown; eyeLine =
 * height of the eyes above the photo's bottom edge. `source` names the issuing authority's page these
 * figures come from. `basis: 'icao'` marks entries whose authority follows the ICAO Doc 9303 format
 * (35×45 mm, head 70–80 % of the height ≈ 32–36 mm) without a head range of its own that we could
 * cite; those use the ICAO figures. Figures are the well-known published ones (not re-checked online
 * for this release): verify with the authority before relying on an edge case.
 */
export interface PhotoRule {
  /** ISO 3166-1 alpha-2. */
  country: string;
  name: string;
  documentType: 'passport' | 'id' | 'visa';
  widthMm: number;
  heightMm: number;
  head: { minMm: number; maxMm: number };
  eyeLine?: { minMm: number; maxMm: number };
  /** The recommended backdrop (kiln's bgColor default is white; this is reported beside it). */
  background: { color: string; note: string };
  basis: 'authority' | 'icao';
  source: string;
}

const ICAO_HEAD = { minMm: 32, maxMm: 36 };
const WHITE = { color: '#FFFFFF', note: 'plain white' };
const LIGHT = { color: '#F0F0F0', note: 'plain, light and uniform (white or light grey)' };
const ICAO_SOURCE = 'ICAO Doc 9303 Part 3 (portrait: 35×45 mm, head 70–80 % of the height)';

function icao(country: string, name: string, authority: string, documentType: PhotoRule['documentType'] = 'passport'): PhotoRule {
  return {
    country,
    name,
    documentType,
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: LIGHT,
    basis: 'icao',
    source: `${authority}; head range from ${ICAO_SOURCE}`,
  };
}

const US = {
  widthMm: 50.8,
  heightMm: 50.8,
  head: { minMm: 25.4, maxMm: 34.9 },
  eyeLine: { minMm: 28.6, maxMm: 34.9 },
  background: { color: '#FFFFFF', note: 'white or off-white' },
  basis: 'authority' as const,
};

export const PHOTO_RULES: PhotoRule[] = [
  {
    country: 'US',
    name: 'United States',
    documentType: 'passport',
    ...US,
    source: 'U.S. Department of State, travel.state.gov: "Photo Requirements" (2×2 in, head 1–1⅜ in, eyes 1⅛–1⅜ in from the bottom)',
  },
  {
    country: 'US',
    name: 'United States',
    documentType: 'visa',
    ...US,
    source: 'U.S. Department of State, travel.state.gov: "Photograph Requirements" (U.S. visas)',
  },
  {
    country: 'IN',
    name: 'India',
    documentType: 'passport',
    ...US,
    eyeLine: undefined,
    head: { minMm: 25, maxMm: 35 },
    background: WHITE,
    source: 'Passport Seva (passportindia.gov.in): "Photograph specifications" (51×51 mm, head 25–35 mm)',
  },
  {
    country: 'IN',
    name: 'India',
    documentType: 'visa',
    ...US,
    eyeLine: undefined,
    head: { minMm: 25, maxMm: 35 },
    background: WHITE,
    source: 'Indian e-Visa (indianvisaonline.gov.in): photo specifications (2×2 in, head 25–35 mm)',
  },
  {
    country: 'CA',
    name: 'Canada',
    documentType: 'passport',
    widthMm: 50,
    heightMm: 70,
    head: { minMm: 31, maxMm: 36 },
    background: { color: '#FFFFFF', note: 'plain white or light-coloured' },
    basis: 'authority',
    source: 'IRCC (canada.ca): "Passport photo specifications" (50×70 mm, chin to crown 31–36 mm)',
  },
  {
    country: 'GB',
    name: 'United Kingdom',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: { minMm: 29, maxMm: 34 },
    background: { color: '#EBEBEB', note: 'plain cream or light grey' },
    basis: 'authority',
    source: 'GOV.UK: "Photos for passports" (35×45 mm, chin to crown 29–34 mm)',
  },
  {
    country: 'DE',
    name: 'Germany',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: { color: '#E6E6E6', note: 'neutral, light, preferably grey' },
    basis: 'authority',
    source: 'Bundesdruckerei / BMI: "Fotomustertafel" (35×45 mm, face 32–36 mm chin to crown)',
  },
  {
    country: 'DE',
    name: 'Germany',
    documentType: 'id',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: { color: '#E6E6E6', note: 'neutral, light, preferably grey' },
    basis: 'authority',
    source: 'Bundesdruckerei / BMI: "Fotomustertafel" (Personalausweis, same format)',
  },
  {
    country: 'DE',
    name: 'Germany (Schengen visa)',
    documentType: 'visa',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: LIGHT,
    basis: 'authority',
    source: 'Auswärtiges Amt: visa photo requirements (biometric, as the Fotomustertafel)',
  },
  {
    country: 'FR',
    name: 'France',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: { color: '#E8E8E8', note: 'uniform light colour, white is refused' },
    basis: 'authority',
    source: 'service-public.fr / ANTS: "Photo d\'identité" (35×45 mm, head 32–36 mm)',
  },
  {
    country: 'FR',
    name: 'France',
    documentType: 'id',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: { color: '#E8E8E8', note: 'uniform light colour, white is refused' },
    basis: 'authority',
    source: 'service-public.fr / ANTS: "Photo d\'identité" (carte nationale d\'identité)',
  },
  icao('IT', 'Italy', 'Polizia di Stato: "Passaporto" photo requirements'),
  icao('ES', 'Spain', 'Policía Nacional (DNI/Pasaporte): photo requirements'),
  icao('PT', 'Portugal', 'IRN / SEF: passport photo requirements'),
  icao('NL', 'Netherlands', 'Rijksoverheid: "Fotomatrix" (passport and ID photo)'),
  icao('BE', 'Belgium', 'FOD Binnenlandse Zaken / IBZ: photo standards for identity documents'),
  icao('AT', 'Austria', 'oesterreich.gv.at: "Passbildkriterien"'),
  icao('CH', 'Switzerland', 'fedpol (schweizerpass.ch): photo requirements'),
  icao('IE', 'Ireland', 'Department of Foreign Affairs (dfa.ie): "Passport photo guidelines"'),
  icao('SE', 'Sweden', 'Polismyndigheten: passport photo requirements'),
  icao('NO', 'Norway', 'Politiet: "Krav til passfoto"'),
  icao('DK', 'Denmark', 'Politi.dk / borger.dk: passport photo requirements'),
  icao('FI', 'Finland', 'Poliisi: "Passport photo guidelines"'),
  icao('PL', 'Poland', 'gov.pl: "Zdjęcie do dowodu lub paszportu"'),
  icao('CZ', 'Czechia', 'Ministerstvo vnitra: photo requirements for travel documents'),
  icao('GR', 'Greece', 'Hellenic Police (passport.gov.gr): photo requirements'),
  icao('HU', 'Hungary', 'Belügyminisztérium / kormanyablak.hu: photo requirements'),
  icao('RO', 'Romania', 'DGP (epasapoarte.ro): photo requirements'),
  icao('RU', 'Russia', 'MVD (Ministry of Internal Affairs): passport photo requirements'),
  icao('MX', 'Mexico', 'SRE (gob.mx/sre): passport photo requirements'),
  icao('PH', 'Philippines', 'DFA (consular.dfa.gov.ph): passport photo requirements'),
  icao('ZA', 'South Africa', 'Department of Home Affairs (dha.gov.za): photo requirements'),
  {
    country: 'AU',
    name: 'Australia',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: { color: '#FFFFFF', note: 'plain white or light grey' },
    basis: 'authority',
    source: 'Australian Passport Office (passports.gov.au): "Photo guidelines" (35–40 × 45–50 mm, chin to crown 32–36 mm)',
  },
  {
    country: 'NZ',
    name: 'New Zealand',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: LIGHT,
    basis: 'authority',
    source: 'Department of Internal Affairs (passports.govt.nz): "Photo requirements" (35×45 mm, chin to crown 32–36 mm)',
  },
  {
    country: 'CN',
    name: 'China',
    documentType: 'passport',
    widthMm: 33,
    heightMm: 48,
    head: { minMm: 28, maxMm: 33 },
    background: WHITE,
    basis: 'authority',
    source: 'National Immigration Administration (nia.gov.cn): entry-exit document photo standard (33×48 mm, head 28–33 mm)',
  },
  {
    country: 'CN',
    name: 'China',
    documentType: 'visa',
    widthMm: 33,
    heightMm: 48,
    head: { minMm: 28, maxMm: 33 },
    background: WHITE,
    basis: 'authority',
    source: 'Chinese Visa Application Service Center (visaforchina.cn): "Photo requirements" (33×48 mm, head 28–33 mm)',
  },
  {
    country: 'JP',
    name: 'Japan',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: LIGHT,
    basis: 'authority',
    source: 'Ministry of Foreign Affairs of Japan (mofa.go.jp): passport photo specifications (35×45 mm, head 34±2 mm)',
  },
  {
    country: 'KR',
    name: 'South Korea',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: ICAO_HEAD,
    background: WHITE,
    basis: 'authority',
    source: 'Ministry of Foreign Affairs (passport.go.kr): passport photo standards (35×45 mm, head 32–36 mm, white)',
  },
  {
    country: 'SG',
    name: 'Singapore',
    documentType: 'passport',
    widthMm: 35,
    heightMm: 45,
    head: { minMm: 25, maxMm: 35 },
    background: WHITE,
    basis: 'authority',
    source: 'ICA (ica.gov.sg): "Photo guidelines" (35×45 mm, face 25–35 mm, white)',
  },
  {
    country: 'TR',
    name: 'Türkiye',
    documentType: 'passport',
    widthMm: 50,
    heightMm: 60,
    head: ICAO_HEAD,
    background: WHITE,
    basis: 'authority',
    source: 'NVİ (nvi.gov.tr): "Biyometrik fotoğraf" (50×60 mm, head 32–36 mm)',
  },
];

export const RULE_COUNTRIES = [...new Set(PHOTO_RULES.map((r) => r.country))].sort();

/** The rule for a country and document type (case-insensitive); UK is accepted for GB. */
export function findRule(country: string, documentType = 'passport'): PhotoRule | undefined {
  const c = country.toUpperCase() === 'UK' ? 'GB' : country.toUpperCase();
  const d = documentType.toLowerCase();
  return PHOTO_RULES.find((r) => r.country === c && r.documentType === d);
}

export function documentTypesOf(country: string): string[] {
  const c = country.toUpperCase() === 'UK' ? 'GB' : country.toUpperCase();
  return PHOTO_RULES.filter((r) => r.country === c).map((r) => r.documentType);
}
