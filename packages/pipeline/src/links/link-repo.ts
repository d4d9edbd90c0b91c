import type { PrismaClient } from '@crawler/db';
import { LINK_STATUSES, type LinkStatus } from '@crawler/core';

/** The link fields the pipeline reads. */
export interface LinkRecord {
  id: string;
  url: string;
  initialUrl: string;
  domain: string;
  status: string;
  pausedUntil: Date | null;
  riskLevel: number;
  attemptCount: number;
  lastAttemptAt: Date | null;
  learningModeEnabled: boolean | null;
  fetcher: string | null;
  selectionSource: string | null;
  lastErrorType: string | null;
  lastError: string | null;
}

/** A new link to store. */
export interface NewLink {
  url: string;
  initialUrl: string;
  domain: string;
  learningModeEnabled?: boolean | null;
}

/** Changes the pipeline makes to a link; undefined fields are left alone. */
export interface LinkPatch {
  status?: LinkStatus;
  pausedUntil?: Date | null;
  riskLevel?: number;
  fetcher?: string | null;
  selectionSource?: string | null;
  lastErrorType?: string | null;
  lastError?: string | null;
}

/** Links as the pipeline needs them: a small interface so processors can be tested with a stub. */
export interface LinkRepo {
  /** Insert the links that do not exist yet (by normalized url) and return every one, with whether it was new. */
  upsertMany(links: NewLink[]): Promise<Array<LinkRecord & { created: boolean }>>;
  get(id: string): Promise<LinkRecord | null>;
  update(id: string, patch: LinkPatch): Promise<void>;
  /** Apply `patch` only while the link is not done or failed; false when it already was (a concurrent job finished it). */
  updateUnlessFinished(id: string, patch: LinkPatch): Promise<boolean>;
  /** Count `n` attempts made now: attempt_count += n, last_attempt_at = at. */
  countAttempts(id: string, n: number, at: Date): Promise<void>;
}

const SELECT = {
  id: true, url: true, initialUrl: true, domain: true, status: true, pausedUntil: true, riskLevel: true,
  attemptCount: true, lastAttemptAt: true, learningModeEnabled: true, fetcher: true, selectionSource: true,
  lastErrorType: true, lastError: true,
} as const;

const UPSERT_CHUNK = 1_000;

/** LinkRepo over the generated Prisma client. */
export class PrismaLinkRepo implements LinkRepo {
  constructor(private readonly prisma: PrismaClient) {}

  async upsertMany(links: NewLink[]): Promise<Array<LinkRecord & { created: boolean }>> {
    // Postgres caps a statement at 65 535 parameters: big batches go in chunks.
    if (links.length > UPSERT_CHUNK) {
      const out: Array<LinkRecord & { created: boolean }> = [];
      for (let i = 0; i < links.length; i += UPSERT_CHUNK) out.push(...(await this.upsertMany(links.slice(i, i + UPSERT_CHUNK))));
      return out;
    }
    if (links.length === 0) return [];
    const urls = links.map((l) => l.url);
    // Two round trips whatever the batch size: skipDuplicates turns a concurrent insert of the same url into a no-op.
    const before = new Set(
      (await this.prisma.link.findMany({ where: { url: { in: urls } }, select: { url: true } })).map((r) => r.url),
    );
    const fresh = links.filter((l) => !before.has(l.url));
    if (fresh.length > 0) {
      await this.prisma.link.createMany({
        data: fresh.map((l) => ({ url: l.url, initialUrl: l.initialUrl, domain: l.domain, learningModeEnabled: l.learningModeEnabled ?? null, status: LINK_STATUSES.queued })),
        skipDuplicates: true,
      });
    }
    const rows = await this.prisma.link.findMany({ where: { url: { in: urls } }, select: SELECT });
    const byUrl = new Map(rows.map((r) => [r.url, r]));
    return links.flatMap((l) => {
      const row = byUrl.get(l.url);
      return row ? [{ ...row, created: !before.has(l.url) }] : [];
    });
  }

  async get(id: string): Promise<LinkRecord | null> {
    return this.prisma.link.findUnique({ where: { id }, select: SELECT });
  }

  async update(id: string, patch: LinkPatch): Promise<void> {
    await this.prisma.link.update({ where: { id }, data: patch });
  }

  async updateUnlessFinished(id: string, patch: LinkPatch): Promise<boolean> {
    const r = await this.prisma.link.updateMany({ where: { id, status: { notIn: [LINK_STATUSES.done, LINK_STATUSES.failed] } }, data: patch });
    return r.count > 0;
  }

  async countAttempts(id: string, n: number, at: Date): Promise<void> {
    await this.prisma.link.update({ where: { id }, data: { attemptCount: { increment: n }, lastAttemptAt: at } });
  }
}
