/** The widget's files of each version on SQLite (types.ts). */
import type { SqliteContext } from '../sqlite/context.ts';
import type { WidgetFile, WidgetFileStore } from './types.ts';

export function sqliteWidgetFiles({ db }: SqliteContext): WidgetFileStore {
  const sql = {
    upsert: db.prepare(
      'INSERT INTO widget_files (version, name, body, kept_at) VALUES (?, ?, ?, ?) ON CONFLICT (version, name) DO UPDATE SET body = excluded.body, kept_at = excluded.kept_at',
    ),
    forget: db.prepare('DELETE FROM widget_files WHERE version <> ? AND kept_at < ?'),
    get: db.prepare('SELECT body FROM widget_files WHERE version = ? AND name = ?'),
  };
  const keep = db.transaction((version: string, files: readonly WidgetFile[], at: number, forgetBefore: number) => {
    for (const file of files) sql.upsert.run(version, file.name, Buffer.from(file.body), at);
    sql.forget.run(version, forgetBefore);
  });
  return {
    async keep(version, files, at, forgetBefore) {
      keep.immediate(version, files, at, forgetBefore);
    },
    async get(version, name) {
      const row = sql.get.get(version, name) as { body: Uint8Array | ArrayBuffer } | undefined;
      return row ? new Uint8Array(row.body) : null;
    },
  };
}
