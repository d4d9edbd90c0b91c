import { describe, expect, it } from 'vitest';
import { bodyCharset, charsetOf, decodeBody } from './decode-body.js';
import { detectContentFamily } from './content-family.js';

describe('decodeBody', () => {
  it('prefers a BOM, then the header charset, then a meta charset, then UTF-8', () => {
    const utf16 = new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]);
    expect(decodeBody(utf16, 'text/html; charset=iso-8859-1')).toBe('hi');
    const latin = new Uint8Array([0x63, 0x61, 0x66, 0xe9]);
    expect(decodeBody(latin, 'text/html; charset="ISO-8859-1"')).toBe('café');
    const meta = new Uint8Array([...Buffer.from('<meta charset="windows-1252"><p>', 'latin1'), 0x80]);
    expect(decodeBody(meta, 'text/html')).toContain('€');
    expect(decodeBody(Buffer.from('naïve', 'utf8'), undefined)).toBe('naïve');
  });
  it('decodes Shift_JIS declared by http-equiv', () => {
    const sjis = new Uint8Array([...Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">', 'latin1'), 0x82, 0xa0]);
    expect(decodeBody(sjis, undefined)).toContain('あ');
  });
  it('reads a page whose <meta> names UTF-16 as UTF-8, as the HTML standard does', () => {
    const page = Buffer.from('<html><head><meta charset="utf-16"><title>Café</title></head><body><a href="/next">next</a></body></html>', 'utf8');
    expect(decodeBody(page, 'text/html')).toBe(page.toString('utf8'));
  });
  it('passes over a header charset nothing decodes to the <meta charset>, as browsers do', () => {
    const sjis = new Uint8Array([...Buffer.from('<meta charset="Shift_JIS"><p>', 'latin1'), 0x82, 0xa0]);
    expect(decodeBody(sjis, 'text/html; charset=bogus')).toContain('<p>あ');
  });
  it('finds a <meta charset> past the first KiB while still in <head>, as browsers do', () => {
    // A long inline script or style (a cookie banner, a tag manager) before the <meta>: 6 KiB of it here.
    const late = (charset: string, text: Uint8Array) =>
      new Uint8Array([...Buffer.from(`<html><head><script>/*${'x'.repeat(6000)}*/</script><meta charset="${charset}"><title>`, 'latin1'), ...text]);
    expect(decodeBody(late('shift_jis', new Uint8Array([0x93, 0xfa, 0x96, 0x7b])), 'text/html')).toContain('<title>日本');
    expect(decodeBody(late('windows-1251', new Uint8Array([0xcf, 0xf0, 0xe8])), 'text/html')).toContain('<title>При');
    // A <meta> inside <body> does not count (nor does it in browsers).
    const inBody = new Uint8Array([...Buffer.from(`<html><head><title>t</title></head><body>${'x'.repeat(2000)}<meta charset="shift_jis">`, 'latin1'), 0xc3, 0xa9]);
    expect(decodeBody(inBody, 'text/html')).toContain('é');
  });
  it('reads an XML declaration\'s encoding in an XML document', () => {
    const xml = new Uint8Array([...Buffer.from('<?xml version="1.0" encoding="windows-1251"?>\n<rss><channel><title>', 'latin1'), 0xcf, 0xf0, 0xe8]);
    expect(decodeBody(xml, 'application/rss+xml')).toContain('<title>При');
    expect(decodeBody(xml, 'text/xml')).toContain('<title>При');
    expect(decodeBody(xml, undefined)).toContain('<title>При');
    // The header's charset still wins.
    expect(decodeBody(xml, 'text/xml; charset=koi8-r')).not.toContain('При');
  });
  it('reads a page that declares no charset as UTF-8 when its bytes are UTF-8, else as windows-1252, as browsers do', () => {
    // “Café” – €5 in windows-1252, with no charset in the header or the markup: an old site's page, common in Europe.
    const legacy = new Uint8Array([...Buffer.from('<html><head><title>', 'latin1'), 0x93, ...Buffer.from('Caf', 'latin1'), 0xe9, 0x94, 0x20, 0x96, 0x20, 0x80, 0x35, ...Buffer.from('</title></head></html>', 'latin1')]);
    expect(bodyCharset(legacy, 'text/html')).toBe('windows-1252');
    expect(decodeBody(legacy, 'text/html')).toContain('<title>“Café” – €5</title>');
    expect(bodyCharset(legacy, undefined)).toBe('windows-1252');
    expect(bodyCharset(new TextEncoder().encode('<title>“Café” – €5</title>'), 'text/html')).toBe('utf-8');
    // Cut inside a character (an analysis that reads a prefix) is still UTF-8.
    expect(bodyCharset(new TextEncoder().encode('<p>日本').subarray(0, 5), 'text/html')).toBe('utf-8');
    // JSON is UTF-8 by definition (RFC 8259), whatever its bytes.
    expect(bodyCharset(new Uint8Array([0x22, 0xe9, 0x22]), 'application/json')).toBe('utf-8');
  });
  it('falls back to UTF-8 for an unknown label', () => {
    expect(decodeBody(Buffer.from('ok'), 'text/html; charset=no-such-charset')).toBe('ok');
  });
  it('caps what it analyses', () => {
    expect(decodeBody(new Uint8Array(100).fill(0x61), undefined, 10)).toBe('a'.repeat(10));
    expect(decodeBody('b'.repeat(100), undefined, 10)).toBe('b'.repeat(10));
  });
  it('reads the charset parameter', () => {
    expect(charsetOf('text/html; Charset=UTF-8')).toBe('utf-8');
    expect(charsetOf('text/html')).toBeNull();
    expect(charsetOf(undefined)).toBeNull();
  });
});

describe('detectContentFamily', () => {
  it.each([
    ['text/html; charset=utf-8', 'html'],
    ['application/xhtml+xml', 'html'],
    ['application/pdf', 'pdf'],
    ['image/webp', 'image'],
    ['video/mp4', 'video'],
    ['application/vnd.apple.mpegurl', 'video'],
    ['audio/mpeg', 'audio'],
    ['application/ld+json', 'json'],
    ['application/rss+xml', 'xml'],
    ['text/plain', 'text'],
    ['application/zip', 'binary'],
  ])('%s → %s', (ct, fam) => {
    expect(detectContentFamily(ct, '')).toBe(fam);
  });
  it('sniffs when the type is missing or generic', () => {
    expect(detectContentFamily(undefined, Buffer.from('%PDF-1.7'))).toBe('pdf');
    expect(detectContentFamily('application/octet-stream', new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe('image');
    expect(detectContentFamily(undefined, '  <!DOCTYPE html><html>')).toBe('html');
    expect(detectContentFamily(undefined, '<?xml version="1.0"?><rss>')).toBe('xml');
    // A feed a script sent as text/html (PHP's default) is XML, not an empty page to render.
    expect(detectContentFamily('text/html; charset=UTF-8', '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>')).toBe('xml');
    expect(detectContentFamily('text/html', Uint8Array.from(Buffer.from('\uFEFF<feed xmlns="http://www.w3.org/2005/Atom">')))).toBe('xml');
    expect(detectContentFamily('text/html', '<!doctype html><html><body><rss>')).toBe('html');
    expect(detectContentFamily(undefined, '{"a":1}')).toBe('json');
    expect(detectContentFamily(undefined, new Uint8Array([0x00, 0x01, 0x02]))).toBe('binary');
    expect(detectContentFamily(undefined, 'just words')).toBe('text');
  });
  it('believes a binary file signature over a textual type: a PDF served as text/html is a PDF', () => {
    expect(detectContentFamily('text/html; charset=utf-8', Buffer.from('%PDF-1.4\n%\xe2\xe3'))).toBe('pdf');
    expect(detectContentFamily('text/plain', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('image');
    // Text that merely starts like one stays text; a specific non-text type is never second-guessed.
    expect(detectContentFamily('text/plain', 'BMW sales rose')).toBe('text');
    expect(detectContentFamily('text/html', '<html><body>%PDF-1.4 is a version</body></html>')).toBe('html');
    expect(detectContentFamily('application/json', Buffer.from('%PDF-1.4'))).toBe('json');
  });
});
