export { CONTENT_FORMATS, UnsupportedFormatError, formatAsMarkdown, formatAsText, type ContentFormat, type FormattedContent, type PageForFormat } from './content/format-content.js';
export { INLINE_FORMAT_BYTES, formatPage } from './content/format-pool.js';
export { readContent, noContentReason, originalContentType, type ContentResponse } from './content/read-content.js';
export { EXPORT_FORMATS, exportPages, exportContentType, type ExportFormat, type ExportOptions } from './export/export-pages.js';
export { jsonlLine } from './export/jsonl.js';
export { pageRecords, revisitRecords, responseRecordId, REVISIT_PROFILES, warcinfoRecord, httpResponseHead, warcDigest, warcDigestFromHex, base32, type WarcInfo } from './export/warc.js';
