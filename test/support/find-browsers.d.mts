/** Types of find-browsers.mjs, which stays plain JavaScript so that `.ci/run` runs it before `npm ci`. */
export type Engine = 'chromium' | 'firefox' | 'webkit';
export const ENGINE_NAMES: Engine[];
export const DEBIAN_PACKAGES: Record<Engine, string[]>;
export const ENGINE_HINTS: Record<Engine, string>;
export function selectedEngines(value?: string): Engine[];
export function onPath(command: string): string | null;
export function findFirefox(): string | null;
export const OTHER_FIREFOXES: string;
export function findFirefoxes(): { path: string; version: string }[];
export function findMiniBrowser(): string | null;
export function hasEngine(engine: Engine): boolean;
export function missingEngineHints(engines: Engine[]): string[];
