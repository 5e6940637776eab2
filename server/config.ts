/** The configuration room is server/config/: this path stays for its importers. */
export * from './config/index.ts';
