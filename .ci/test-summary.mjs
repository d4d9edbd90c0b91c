// Sums the vitest JSON reports of every workspace into one closing line: "tests: N passed, N failed".
import fs from 'node:fs';
import path from 'node:path';

const dir = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '.test-reports');
let passed = 0, failed = 0, skipped = 0;
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
for (const f of files) {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    passed += r.numPassedTests ?? 0;
    failed += (r.numFailedTests ?? 0) + (r.numFailedTestSuites && !r.numFailedTests ? r.numFailedTestSuites : 0);
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  } catch (err) {
    console.error(`unreadable test report ${f}: ${err.message}`);
    failed += 1;
  }
}
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
