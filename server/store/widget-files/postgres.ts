/** The widget's files of each version on Postgres, shared by every instance (types.ts). */
import type { PostgresContext } from '../postgres/context.ts';
import type { WidgetFileStore } from './types.ts';

export function postgresWidgetFiles({ query, tx }: PostgresContext): WidgetFileStore {
  return {
    async keep(version, files, at, forgetBefore) {
      await tx(async (q) => {
        for (const file of files)
          await q(
            'INSERT INTO widget_files (version, name, body, kept_at) VALUES ($1, $2, $3, $4) ON CONFLICT (version, name) DO UPDATE SET body = excluded.body, kept_at = excluded.kept_at',
            [version, file.name, Buffer.from(file.body), at],
          );
        await q('DELETE FROM widget_files WHERE version <> $1 AND kept_at < $2', [version, forgetBefore]);
      });
    },
    async get(version, name) {
      const row = (await query<{ body: Buffer }>('SELECT body FROM widget_files WHERE version = $1 AND name = $2', [version, name])).rows[0];
      return row ? new Uint8Array(row.body) : null;
    },
  };
}
