/**
 * Two V8 heap snapshots (`v8.writeHeapSnapshot`) compared by what their objects are: for each
 * constructor (objects), function (closures) or kind (strings, arrays, code, native...), how many
 * more there are in the second and how many more bytes of their own (self size). bench/sse-fanout.ts
 * uses it (BENCH_HEAP) to say what one status stream holds in the proxy.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** One more node of `key`, of `bytes` self size. */
function tally(out: Map<string, { count: number; bytes: number }>, key: string, bytes: number): void {
  const entry = out.get(key) ?? { count: 0, bytes: 0 };
  entry.count++;
  entry.bytes += bytes;
  out.set(key, entry);
}

/** Count and self size of a snapshot's nodes, by `kind name` (objects and closures by name, the rest by kind). */
export function heapByKind(file: string): Map<string, { count: number; bytes: number }> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const types = data.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < data.nodes.length; i += width) {
    const type = types[data.nodes[i + typeAt]!]!;
    const name = type === 'object' || type === 'closure' || type === 'native' ? data.strings[data.nodes[i + nameAt]!]! : '';
    const key = `${type} ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`.trim();
    tally(out, key, data.nodes[i + sizeAt]!);
  }
  return out;
}

/** The `top` largest growths from `before` to `after`, per `per` (e.g. per client), by bytes. */
export function heapGrowth(before: string, after: string, per: number, top = 15): string[] {
  const a = heapByKind(before);
  const b = heapByKind(after);
  const rows = [...b].map(([key, x]) => {
    const was = a.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: (x.count - was.count) / per, bytes: (x.bytes - was.bytes) / per };
  });
  const total = rows.reduce((sum, r) => sum + r.bytes, 0);
  return [
    `heap growth per client: ${(total / 1024).toFixed(2)} KB of V8 heap (self sizes), the largest:`,
    ...rows
      .sort((x, y) => y.bytes - x.bytes)
      .slice(0, top)
      .map((r) => `  ${r.bytes.toFixed(0).padStart(6)} B  ${r.count.toFixed(2).padStart(6)} x  ${r.key}`),
  ];
}

interface SnapshotWithEdges extends Snapshot {
  snapshot: Snapshot['snapshot'] & { meta: Snapshot['snapshot']['meta'] & { edge_fields: string[]; edge_types: [string[]] } };
  edges: number[];
}

/**
 * Arrays (V8's internal `array` nodes: backing stores, listener lists, hash tables) by what holds
 * them: `holder kind and name . edge`, each array counted once, at its first holder met.
 */
export function arraysByHolder(file: string): Map<string, { count: number; bytes: number }> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as SnapshotWithEdges;
  const { node_fields: fields, node_types: nodeTypes, edge_fields: edgeFields, edge_types: edgeTypes } = data.snapshot.meta;
  const types = nodeTypes[0];
  const width = fields.length;
  const edgeWidth = edgeFields.length;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => fields.indexOf(f)) as [number, number, number, number];
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f)) as [number, number, number];
  const seen = new Set<number>();
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0, edge = 0; i < data.nodes.length; i += width) {
    const holder = `${types[data.nodes[i + typeAt]!]} ${data.strings[data.nodes[i + nameAt]!]!.slice(0, 40)}`;
    for (let k = data.nodes[i + edgeCountAt]!; k > 0; k--, edge += edgeWidth) {
      const to = data.edges[edge + toAt]!;
      if (seen.has(to) || types[data.nodes[to + typeAt]!] !== 'array') continue;
      seen.add(to);
      const edgeType = edgeTypes[0][data.edges[edge + edgeTypeAt]!];
      const name = edgeType === 'element' || edgeType === 'hidden' ? `[${edgeType}]` : data.strings[data.edges[edge + edgeNameAt]!];
      const key = `${holder}.${name}`;
      tally(out, key, data.nodes[to + sizeAt]!);
    }
  }
  return out;
}

/** arraysByHolder's growth from `before` to `after`, per `per`, the `top` largest. */
export function arrayGrowth(before: string, after: string, per: number, top = 8): string[] {
  const a = arraysByHolder(before);
  const b = arraysByHolder(after);
  return [...b]
    .map(([key, x]) => ({ key, count: (x.count - (a.get(key)?.count ?? 0)) / per, bytes: (x.bytes - (a.get(key)?.bytes ?? 0)) / per }))
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, top)
    .map((r) => `  ${r.bytes.toFixed(0).padStart(6)} B  ${r.count.toFixed(2).padStart(6)} x  array held by ${r.key}`);
}
