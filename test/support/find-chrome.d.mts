/** Types of find-chrome.mjs, which stays plain JavaScript so that `.ci/run` and npm scripts run it without tsx. */
export const INSTALL_HINT: string;
export const CHROME_ARGS: string[];
export function findChrome(): string | null;
