export { startSyntheticWeb, listPageUrls, type SyntheticWeb, type SyntheticWebOptions, type RequestStats } from './synthetic-web.js';
export { renderPage, pageTitle, pageTargetBytes, type PageSpec } from './page-corpus.js';
export { digestHtml, digestDocument, type PageDigest, type DigestTotals } from './parse-page.js';
export { crawlWithUndici, type UndiciCrawlOptions } from './ref-undici.js';
export { crawlWithCrawlee, type CrawleeCrawlOptions } from './ref-crawlee.js';
export { crawlWithBullmq, type BullmqCrawlOptions } from './ref-bullmq.js';
export { crawlWithOurs, oursUnavailableReason, type OursCrawlOptions, type OursMeasurement } from './ours.js';
export { figuresOf, throughputRatio, formatSizeTable, formatScaleTable, type CrawlRow, type RowFigures } from './report.js';
export { CRAWLER_NAMES, type CrawlerName, type CrawlMeasurement, type CrawlSpec } from './reference-result.js';
