-- The rollups keep only the URL heuristic types the router asks findBestFetcher with (core ROUTING_HEURISTIC_TYPES:
-- domain, suffix, contains_cdn, video_platform, and section since 20261205000100). Every attempt adds a row to every
-- non-empty subset of its rollup keys, so each listed type a URL carries doubles its writes: an article URL's
-- domain + section + path_depth was 7 rollup rows per attempt, a CDN asset's six keys 63. The types removed here are
-- never in a router query (they pooled the whole web: see routing-heuristics.ts); a query that names one takes the
-- exact scan, as any unlisted type always has. Attempts logged before keep their stored rollup_keys, so dropping their
-- partition still takes back exactly what they added; their rows for the removed types are never read and reach 0
-- when the last such partition is dropped.
DELETE FROM "heuristic_rollup_types"
WHERE "heuristic_type" IN ('path_depth', 'contains_static', 'contains_assets', 'contains_api', 'deep_path', 'complex_query');
