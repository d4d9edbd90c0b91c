/**
 * A Map that keeps at most `maxEntries`: setting a key makes it the newest, and a set past the limit drops the
 * oldest. For a worker's per-site memory (sessions, cookie jars, verdicts), which would otherwise grow with every site
 * a long-running fleet ever meets; what falls out is what was used least recently, and each user says what losing an
 * entry costs (a new session id, cookies fetched again from Redis).
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly maxEntries: number) {
    super();
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer (got ${maxEntries})`);
  }

  override set(key: K, value: V): this {
    // Map keeps insertion order: delete first so the key moves to the newest end.
    super.delete(key);
    super.set(key, value);
    while (this.size > this.maxEntries) super.delete(this.keys().next().value as K);
    return this;
  }
}
