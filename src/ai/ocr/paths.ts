/**
 * Where the OCR runtime generations live: `<data>/ai/v3/generations/<id>/` (immutable once complete;
 * laid out like a data dir's `ai/` tree, so the model host loads a generation by its directory),
 * `active` (the link to the one in use, switched by one rename), `leases/<id>/` (one file per request
 * reading a generation) and `last-install.json` (the outcome of the latest install).
 */
import path from 'node:path';
import { aiDir } from '../paths.js';

export const v3Dir = (dataDir: string) => path.join(aiDir(dataDir), 'v3');
export const generationsDir = (dataDir: string) => path.join(v3Dir(dataDir), 'generations');
export const generationDir = (dataDir: string, id: string) => path.join(generationsDir(dataDir), id);
export const activeLink = (dataDir: string) => path.join(v3Dir(dataDir), 'active');
export const leasesDir = (dataDir: string, id: string) => path.join(v3Dir(dataDir), 'leases', id);
export const lastInstallFile = (dataDir: string) => path.join(v3Dir(dataDir), 'last-install.json');
/** The record written into a generation when it is complete and verified. */
export const GENERATION_RECORD = 'generation.json';
