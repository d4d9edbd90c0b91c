import { readdirSync, readFileSync } from 'node:fs';

/** Process ids of `root` and all its descendants, from /proc (Linux). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8').trim();
      // The command name is parenthesised and may contain spaces; fields after it are space-separated.
      const afterComm = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(afterComm[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // Exited while we looked.
    }
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Sum of VmRSS over a process tree, in bytes. Shared pages count once per process, as `ps` would show them. */
export function treeRssBytes(root: number = process.pid): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      const kb = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)?.[1];
      if (kb) total += Number(kb) * 1024;
    } catch {
      // Exited while we looked.
    }
  }
  return total;
}

export interface RssSample {
  atMs: number;
  pagesDone: number;
  rssBytes: number;
}

/** Sample the tree's RSS every `everyMs` while a crawl runs, tagging each sample with the pages done so far. */
export function startRssSampler(pagesDone: () => number, everyMs = 200): { stop(): RssSample[] } {
  const t0 = performance.now();
  const samples: RssSample[] = [];
  const take = () => samples.push({ atMs: performance.now() - t0, pagesDone: pagesDone(), rssBytes: treeRssBytes() });
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** Peak RSS up to and after a page count: "flat after the first N pages" means the second is not much above the first. */
export function summariseRss(samples: RssSample[], warmupPages = 100): { peakBytes: number; peakWarmupBytes: number; peakAfterWarmupBytes: number; growthAfterWarmup: number } {
  const max = (xs: RssSample[]) => xs.reduce((m, s) => Math.max(m, s.rssBytes), 0);
  const warm = max(samples.filter((s) => s.pagesDone <= warmupPages));
  const after = max(samples.filter((s) => s.pagesDone > warmupPages));
  return { peakBytes: max(samples), peakWarmupBytes: warm, peakAfterWarmupBytes: after, growthAfterWarmup: warm > 0 ? after / warm : 0 };
}
