/** Types of find-chrome.mjs, which stays plain JavaScript so that `.ci/run` and npm scripts run it without tsx. */
export const INSTALL_HINT: string;
export function findChrome(): string | null;
