/**
 * Bulk-loads a synthetic attempt log for the store benchmark with generate_series, never row by row: `n` attempts
 * with 8 heuristics each, one domain ('hot.example') on 10% of them, the rest spread over 5,000 domains. Fetcher and
 * server type follow the domain (as on the real web) with 10% noise; suffix, path depth and flags vary per page.
 * Triggers are off during the load, so the rollups are rebuilt in one pass at the end (rollup_rebuild()).
 */
import pg from 'pg';

export const HOT_DOMAIN = 'hot.example';

const LOAD_SQL = `
ALTER TABLE attempt_heuristics DISABLE TRIGGER ALL;
DROP INDEX IF EXISTS idx_heur_match, idx_heur_type_value, idx_heur_attempt;
INSERT INTO fetcher_attempts (id, url, fetcher, success, is_banned, attempted_at, selection_source)
SELECT i, 'https://bench/' || i,
  CASE WHEN abs(hashint8(i * 31)) % 10 = 0
       THEN (ARRAY['simple_http','playwright','playwright_stealth'])[1 + abs(hashint8(i * 37)) % 3]
       ELSE (ARRAY['simple_http','simple_http','playwright','playwright_stealth'])[1 + CASE WHEN i % 10 = 0 THEN 2 ELSE abs(hashint8(i)) % 5000 % 4 END]
  END,
  abs(hashint8(i * 41)) % 100 < 80, abs(hashint8(i * 43)) % 100 < 2,
  now() - (abs(hashint8(i * 47)) % 7776000) * interval '1 second', 'learned'
FROM generate_series(1, $1::bigint) i;
INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, fetcher, success, attempted_at, created_at)
SELECT a.id, h.t, h.v, a.fetcher, a.success, a.attempted_at, a.attempted_at
FROM fetcher_attempts a
CROSS JOIN LATERAL (SELECT CASE WHEN a.id % 10 = 0 THEN 'hot.example' ELSE 'd' || (abs(hashint8(a.id)) % 5000) || '.example' END AS domain) d
CROSS JOIN LATERAL (VALUES
  ('domain', d.domain),
  ('suffix', (ARRAY['.html','.html','.html','.php','.pdf','.jpg','.htm','.aspx','.js','.css'])[1 + abs(hashint8(a.id * 7)) % 10]),
  ('path_depth', (1 + abs(hashint8(a.id * 11)) % 8)::text),
  ('status_' || (ARRAY['200','200','200','200','200','200','200','200','403','429'])[1 + abs(hashint8(a.id * 13)) % 10], 'true'),
  ((ARRAY['server_nginx','server_cloudflare','server_apache'])[1 + abs(hashtext(d.domain)) % 3], 'true'),
  ('has_spa', (abs(hashtext(d.domain)) % 4 = 0)::text),
  ('empty_body', (abs(hashint8(a.id * 23)) % 10 = 0)::text),
  ((ARRAY['contains_static','contains_cdn','contains_api','contains_assets'])[1 + abs(hashint8(a.id * 29)) % 4], 'true')
) AS h(t, v)
WHERE a.url LIKE 'https://bench/%';
SELECT setval(pg_get_serial_sequence('fetcher_attempts', 'id'), (SELECT max(id) FROM fetcher_attempts));
CREATE INDEX "idx_heur_type_value" ON "attempt_heuristics"("heuristic_type", "heuristic_value", "attempt", "fetcher", "success", "attempted_at");
CREATE INDEX "idx_heur_attempt" ON "attempt_heuristics"("attempt");
ALTER TABLE attempt_heuristics ENABLE TRIGGER ALL;
SELECT rollup_rebuild();
`;

/** Load `n` synthetic attempts into the (migrated, otherwise empty but for priors) database at `url`. */
export async function loadAttempts(url: string, n: number): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // Priors hold ids 1..30; start the synthetic ids after them.
    await c.query('DELETE FROM fetcher_attempts WHERE selection_source = $1', ['prior']);
    for (const stmt of LOAD_SQL.split(';\n').map((s) => s.trim()).filter(Boolean)) {
      await c.query(stmt, stmt.includes('$1') ? [n] : []);
    }
    await c.query('SET maintenance_work_mem = \'256MB\'');
    await c.query('VACUUM ANALYZE fetcher_attempts');
    await c.query('VACUUM ANALYZE attempt_heuristics');
  } finally {
    await c.end();
  }
}
