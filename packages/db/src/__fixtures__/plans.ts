import type pg from 'pg';

/** A relation's name with a day (or default) partition of the attempt log named as its parent. */
export function parentName(relation: string): string {
  return relation.replace(/_(p\d{8}|default)$/, '');
}

/**
 * Every node of a statement's plan, depth first, as `Node Type` and, for an index scan, its index (`Index Scan
 * idx_links_status`): what a test looks through for a Sort, a Seq Scan or the index it expects. `sql` is what follows
 * EXPLAIN, e.g. an EXECUTE.
 */
export async function planNodes(client: pg.Client, sql: string): Promise<string[]> {
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`);
  const nodes: string[] = [];
  const walk = (n: { 'Node Type': string; 'Index Name'?: string; Plans?: unknown[] }) => {
    nodes.push(n['Index Name'] ? `${n['Node Type']} ${n['Index Name']}` : n['Node Type']);
    for (const c of n.Plans ?? []) walk(c as never);
  };
  walk(rows[0]['QUERY PLAN'][0].Plan);
  return nodes;
}

/** The relations a statement's plan reads with a sequential scan (`sql` is what follows EXPLAIN, e.g. an EXECUTE). */
export async function seqScannedRelations(client: pg.Client, sql: string): Promise<string[]> {
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`);
  const out: { name: string }[] = [];
  const walk = (n: Record<string, unknown>) => {
    if (n['Node Type'] === 'Seq Scan') out.push({ name: String(n['Relation Name']) });
    for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
  };
  walk((rows[0]['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  // A partition of the attempt log (a day, or the default one) that its statistics know to be empty is
  // rightly read with a sequential scan of nothing: it is not the hazard these checks look for.
  const scanned = [...new Set(out.map((r) => r.name))];
  const { rows: empty } = await client.query<{ relname: string }>(
    "SELECT relname FROM pg_class WHERE relname = ANY($1::text[]) AND reltuples = 0 AND relname ~ '_(p[0-9]{8}|default)$'",
    [scanned],
  );
  const skip = new Set(empty.map((r) => r.relname));
  return out.filter((r) => !skip.has(r.name)).map((r) => parentName(r.name));
}
