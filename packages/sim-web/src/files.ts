import { pdfBytes } from '@crawler/testkit';

/** A file answer of a site: what it sends for a path under `/files/`. */
export interface FileAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array | string;
}

/** An empty zip archive (its end-of-central-directory record alone). */
const ZIP = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');

/**
 * The files a site serves under `/files/` (SiteSpec.hugeFileBytes sizes the huge one), as the web serves downloads:
 * `doc-N.pdf` inline (Chromium shows it in its PDF viewer), `sheet-N.csv` and `archive-N.zip` as attachments (Chromium
 * downloads them), `huge-N.bin` an attachment of `hugeBytes`, `get-N` a download link that redirects (302) to
 * `doc-N.pdf`, `back-N` one that redirects back inward to the HTML page `/page/N`. Null for any other path.
 */
export function fileAnswer(path: string, n: number, opts: { hugeBytes: number }): FileAnswer | null {
  const name = /^\/files\/([a-z]+)-\d+(?:\.[a-z]+)?$/.exec(path)?.[1];
  switch (name) {
    case 'doc':
      return { status: 200, headers: { 'content-type': 'application/pdf' }, body: pdfBytes() };
    case 'sheet':
      return { status: 200, headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="sheet-${n}.csv"` }, body: `id,title\n${n},sheet ${n}\n` };
    case 'archive':
      return { status: 200, headers: { 'content-type': 'application/zip', 'content-disposition': `attachment; filename="archive-${n}.zip"` }, body: ZIP };
    case 'huge':
      return { status: 200, headers: { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment' }, body: Buffer.alloc(opts.hugeBytes, 7) };
    case 'get':
      return { status: 302, headers: { location: `/files/doc-${n}.pdf` }, body: '' };
    case 'back':
      return { status: 302, headers: { location: `/page/${n}` }, body: '' };
    default:
      return null;
  }
}
