import { load, type CheerioAPI } from 'cheerio';

/** What every reference extracts from a page: the same work our crawler's parse step does at minimum. */
export interface PageDigest {
  title: string;
  /** Absolute http(s) links found in `<a href>`. */
  links: number;
  /** Length of the body's text content, in characters. */
  textChars: number;
}

/** Extract title, absolute links and text length from an already loaded document (Crawlee hands one in). */
export function digestDocument($: CheerioAPI, baseUrl: string): PageDigest {
  let links = 0;
  $('a[href]').each((_, el) => {
    const href = $(el).attr('href');
    if (!href) return;
    try {
      const u = new URL(href, baseUrl);
      if (u.protocol === 'http:' || u.protocol === 'https:') links++;
    } catch {
      // A malformed href is skipped, as a crawler would.
    }
  });
  return { title: $('title').first().text().trim(), links, textChars: $('body').text().length };
}

/**
 * Parse HTML with cheerio on htmlparser2 and digest it. htmlparser2 rather than cheerio's default parse5: it is what
 * Crawlee's CheerioCrawler uses, and about eight times faster on these pages, so the limit really is the limit.
 */
export function digestHtml(html: string, baseUrl: string): PageDigest {
  return digestDocument(load(html, { xml: { xmlMode: false, decodeEntities: true } }), baseUrl);
}

/** Running totals over a crawl: a cheap checksum showing two crawlers parsed the same pages. */
export interface DigestTotals {
  okPages: number;
  failedPages: number;
  links: number;
  textChars: number;
}

/** A fresh totals record. */
export function createTotals(): DigestTotals {
  return { okPages: 0, failedPages: 0, links: 0, textChars: 0 };
}

/** Add one page's digest to the totals. */
export function addDigest(totals: DigestTotals, digest: PageDigest): void {
  totals.okPages++;
  totals.links += digest.links;
  totals.textChars += digest.textChars;
}
