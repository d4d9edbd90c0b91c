import type pg from 'pg';

/** The relations a statement's plan reads with a sequential scan (`sql` is what follows EXPLAIN, e.g. an EXECUTE). */
export async function seqScannedRelations(client: pg.Client, sql: string): Promise<string[]> {
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`);
  const out: string[] = [];
  const walk = (n: Record<string, unknown>) => {
    if (n['Node Type'] === 'Seq Scan') out.push(String(n['Relation Name']));
    for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
  };
  walk((rows[0]['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return out;
}
