/**
 * The widget's files of each version the proxy ran (src/shared/widget-files.ts): a page's script asks
 * for its own build's chunks, also from an instance of another version (a rolling deploy) or after the
 * proxy was upgraded under an open page, so every instance keeps its version's chunks where the
 * others can serve them. Kept at each start; a version no instance started for a while is forgotten.
 */
import type { WidgetFile } from '../../../src/shared/widget-files.ts';

export type { WidgetFile };

export interface WidgetFileStore {
  /**
   * Keeps this version's files (a version kept before is marked kept again at `at`), and forgets
   * every other version last kept before `forgetBefore`. One transaction.
   */
  keep(version: string, files: readonly WidgetFile[], at: number, forgetBefore: number): Promise<void>;
  /** A kept version's file, or null when that version or file is not kept. */
  get(version: string, name: string): Promise<Uint8Array | null>;
}
